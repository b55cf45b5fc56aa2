package bot

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"brain/channels/slack/slackfake"
	"brain/webhooks/slackhook"
)

// BenchmarkSlackIntake measures signed Events API intake at 64 concurrent
// connections: "floor" is a bare net/http handler that only verifies the
// signature; "brain" is the real endpoint (verify, parse, dedupe, durable
// group-committed inbox record, ack) with storage.synchronous full. Each
// request is a distinct message event. Reports req/s and p99 latency.
func BenchmarkSlackIntake(b *testing.B) {
	floor := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var buf bytes.Buffer
		_, _ = buf.ReadFrom(http.MaxBytesReader(w, r.Body, 1<<20))
		if slackhook.Verify(signingSecret, r.Header, buf.Bytes(), time.Now()) != nil {
			w.WriteHeader(http.StatusUnauthorized)
		}
	}))
	defer floor.Close()
	b.Run("floor", func(b *testing.B) { intakeLoad(b, floor.URL+"/slack/events", messageEvent) })

	fake := slackfake.New()
	defer fake.Close()
	extra := fmt.Sprintf("slack: {bot_token: xoxb-bench, signing_secret: %s, api_url: %s/api/}\nlog: {level: error}\n", signingSecret, fake.URL())
	ta := newTestApp(b, extra, Options{})
	b.Run("brain", func(b *testing.B) { intakeLoad(b, ta.base+"/slack/events", messageEvent) })
	// Mentions, each a new thread: each starts a session whose turn the
	// fake model answers at once, so the worker's session starts and the
	// turns share the CPU and the writer with the intake, as in real use.
	b.Run("brain-mentions", func(b *testing.B) { intakeLoad(b, ta.base+"/slack/events", mentionEvent) })
}

func messageEvent(n int64) []byte {
	return []byte(fmt.Sprintf(`{"type":"event_callback","team_id":"T0FAKE","event_id":"EvB%d","event":{"type":"message","user":"U1","text":"load %d","ts":"1700000000.%06d","channel":"C1","channel_type":"channel"}}`, n, n, n))
}

func mentionEvent(n int64) []byte {
	return []byte(fmt.Sprintf(`{"type":"event_callback","team_id":"T0FAKE","event_id":"EvM%d","event":{"type":"app_mention","user":"U1","text":"<@UBOT> load %d","ts":"1700000001.%06d","channel":"C1","event_ts":"1700000001.%06d"}}`, n, n, n, n))
}

func intakeLoad(b *testing.B, target string, event func(n int64) []byte) {
	const clients = 64
	tr := &http.Transport{MaxIdleConnsPerHost: clients, MaxConnsPerHost: clients}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	var seq, failed atomic.Int64
	var mu sync.Mutex
	var lat []time.Duration
	b.SetParallelism((clients + 1) / 2) // GOMAXPROCS=2 -> 64 goroutines
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		var mine []time.Duration
		for pb.Next() {
			n := seq.Add(1)
			body := event(n)
			ts := strconv.FormatInt(time.Now().Unix(), 10)
			req, _ := http.NewRequest("POST", target, bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set(slackhook.HeaderTimestamp, ts)
			req.Header.Set(slackhook.HeaderSignature, slackhook.Signature(signingSecret, ts, body))
			t0 := time.Now()
			resp, err := client.Do(req)
			if err != nil || resp.StatusCode != 200 {
				failed.Add(1)
			}
			if err == nil {
				resp.Body.Close()
			}
			mine = append(mine, time.Since(t0))
		}
		mu.Lock()
		lat = append(lat, mine...)
		mu.Unlock()
	})
	elapsed := time.Since(start)
	b.StopTimer()
	if failed.Load() > 0 {
		b.Fatalf("%d requests failed", failed.Load())
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "req/s")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
}
