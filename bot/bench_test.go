package bot

import (
	"bytes"
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkAPI_UserMessage measures POST /v1/sessions/{id}/events
// (user.message) through the real HTTP server, with 64 concurrent clients
// spread over 64 sessions. Each accepted message is a durable SQLite commit
// before the 202, and starts or joins a turn against the fake model server
// (test double), so turns run alongside. Reports requests/s.
func BenchmarkAPI_UserMessage(b *testing.B) {
	for _, sync := range []string{"full", "normal"} {
		b.Run("sync="+sync, func(b *testing.B) {
			ta := newTestApp(b, fmt.Sprintf("limits: {max_queued_turns: 100000}\nstorage: {synchronous: %s}\nlog: {level: warn}\n", sync), Options{})
			const clients = 64
			ids := make([]string, clients)
			for i := range ids {
				ids[i] = ta.createSession().ID
			}
			tr := &http.Transport{MaxIdleConnsPerHost: clients, MaxConnsPerHost: clients}
			defer tr.CloseIdleConnections()
			client := &http.Client{Transport: tr}
			var next, failed atomic.Int64
			b.SetParallelism((clients + 1) / 2) // GOMAXPROCS=2 -> 64 goroutines
			b.ResetTimer()
			start := time.Now()
			b.RunParallel(func(pb *testing.PB) {
				id := ids[int(next.Add(1))%clients]
				body := []byte(`{"type":"user.message","text":"hello"}`)
				for pb.Next() {
					resp, err := client.Post(ta.base+"/v1/sessions/"+id+"/events", "application/json", bytes.NewReader(body))
					if err != nil {
						failed.Add(1)
						continue
					}
					resp.Body.Close()
					if resp.StatusCode != http.StatusAccepted {
						failed.Add(1)
					}
				}
			})
			elapsed := time.Since(start)
			b.StopTimer()
			if failed.Load() > 0 {
				b.Fatalf("%d requests failed", failed.Load())
			}
			b.ReportMetric(float64(b.N)/elapsed.Seconds(), "req/s")
		})
	}
}
