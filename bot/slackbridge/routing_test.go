package slackbridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"brain/bot/bridge/bridgetest"
	"brain/channels/slack"
	"brain/engine"
	"brain/store"
	"brain/webhooks/slackhook"
)

// TestRouting runs the routing suite every bridge runs: mentions in Slack
// threads, worked by the bridge's handler as its inbox worker would.
func TestRouting(t *testing.T) {
	bridgetest.RunRouting(t, func(t *testing.T) bridgetest.Harness {
		r := newRig(t)
		eng, err := engine.New(engine.Config{Store: r.store, Clock: time.Now, NewID: counter(), Agents: []*engine.Agent{bridgetest.Agent()}})
		if err != nil {
			t.Fatal(err)
		}
		r.eng = eng
		b := r.bridge()
		roots, stamps := map[string]string{}, map[string]string{}
		return bridgetest.Harness{
			Engine: r.eng,
			Origin: engine.OriginSlack,
			Message: func(t *testing.T, thread, eventKey, text string) string {
				ts, seen := stamps[eventKey]
				if !seen {
					ts = fmt.Sprintf("1700000100.%06d", len(stamps)+1)
					stamps[eventKey] = ts
				}
				root, ok := roots[thread]
				if !ok {
					root = ts // a mention in the channel starts the thread
					roots[thread] = root
				}
				m := slackhook.Message{EventType: "app_mention", Team: "T1", Channel: "C1", User: "U1", Text: text, TS: ts, Mention: true}
				if ts != root {
					m.ThreadTS = root
				}
				key := slack.Thread{Team: "T1", Channel: "C1", TS: root}.Key()
				payload, err := json.Marshal(slackhook.Item{ThreadKey: key, Body: &m})
				if err != nil {
					t.Fatal(err)
				}
				if err := b.handle(context.Background(), store.Inbound{Source: InboxSource, ThreadKey: key, Payload: payload}); err != nil {
					t.Fatal(err)
				}
				return key
			},
			SessionOf: func(t *testing.T, key string) (engine.Session, bool) {
				s, err := r.store.SessionByThread(context.Background(), key)
				if errors.Is(err, engine.ErrNotFound) {
					return s, false
				}
				if err != nil {
					t.Fatal(err)
				}
				return s, true
			},
		}
	})
}

// counter makes distinct ids.
func counter() func(string) string {
	var n atomic.Int64
	return func(prefix string) string { return fmt.Sprintf("%s_%d", prefix, n.Add(1)) }
}
