package bot

import (
	"bytes"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"brain/channels/slack/slackfake"
	"brain/engine/model/fakemodel"
	"brain/webhooks/slackhook"
)

// BenchmarkSlackStream measures a streamed Slack reply end to end (engine,
// deltas, live reply, the real slack-go client, the fake Slack): the fake
// model writes a 6,000-character answer in 20-character pieces every 10 ms
// (about 2,000 characters a second). It reports the time from the model's
// first piece to the first text visible in Slack (chat.startStream
// answered), both on the fakes' clock, and the appendStream calls per
// second while the answer streams: the batching that keeps a stream under
// Slack's Tier 4 limit.
func BenchmarkSlackStream(b *testing.B) {
	fake := slackfake.New()
	defer fake.Close()
	extra := fmt.Sprintf("slack: {bot_token: xoxb-bench, signing_secret: %s, api_url: %s/api/}\nlog: {level: error}\n", signingSecret, fake.URL())
	ta := newTestApp(b, extra, Options{})
	answer := strings.Repeat("streaming words ", 375) // 6,000 characters
	var firstText, appendRate []float64
	for i := 0; i < b.N; i++ {
		var mu sync.Mutex
		var firstPiece time.Time
		ta.fake.Push(fakemodel.Text(answer).Slowly(20, 10*time.Millisecond).OnPiece(func(n int, _ string) {
			if n == 0 {
				mu.Lock()
				firstPiece = time.Now()
				mu.Unlock()
			}
		}))
		thread := fmt.Sprintf("1700001%03d.000100", i)
		body := []byte(fmt.Sprintf(`{"type":"event_callback","team_id":"T0FAKE","event_id":"EvS%d","event":{"type":"app_mention","user":"U1","text":"<@%s> go","ts":"%s","channel":"C1"}}`,
			i, slackfake.BotUserID, thread))
		ts := strconv.FormatInt(time.Now().Unix(), 10)
		req, _ := http.NewRequest("POST", ta.base+"/slack/events", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set(slackhook.HeaderTimestamp, ts)
		req.Header.Set(slackhook.HeaderSignature, slackhook.Signature(signingSecret, ts, body))
		resp, err := http.DefaultClient.Do(req)
		if err != nil || resp.StatusCode != 200 {
			b.Fatalf("event: %v %v", err, resp)
		}
		resp.Body.Close()

		var msg slackfake.Message
		deadline := time.Now().Add(60 * time.Second)
		for msg.TS == "" || msg.Streaming {
			for _, m := range fake.Thread("C1", thread) {
				if m.Streamed {
					msg = m
				}
			}
			if time.Now().After(deadline) {
				b.Fatalf("the stream did not end: %+v", msg)
			}
			time.Sleep(2 * time.Millisecond)
		}
		var started, stopped time.Time
		appends := 0
		for _, c := range fake.Calls("") {
			switch {
			case c.Method == "chat.startStream" && c.Params.Get("thread_ts") == thread:
				started = c.At
			case c.Method == "chat.appendStream" && c.Params.Get("ts") == msg.TS:
				appends++
			case c.Method == "chat.stopStream" && c.Params.Get("ts") == msg.TS:
				stopped = c.At
			}
		}
		mu.Lock()
		firstText = append(firstText, float64(started.Sub(firstPiece).Microseconds())/1000)
		mu.Unlock()
		appendRate = append(appendRate, float64(appends)/stopped.Sub(started).Seconds())
	}
	b.ReportMetric(mean(firstText), "ms-to-first-text")
	b.ReportMetric(mean(appendRate), "appends/s")
}

func mean(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}
