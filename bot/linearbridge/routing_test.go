package linearbridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"brain/bot/bridge/bridgetest"
	"brain/engine"
	"brain/store"
	"brain/store/sqlite"
	"brain/webhooks/linearhook"
)

// TestRouting runs the routing suite every bridge runs: prompts in Linear
// agent sessions, worked by the bridge's handler as its inbox worker
// would, against the fake Linear API.
func TestRouting(t *testing.T) {
	bridgetest.RunRouting(t, func(t *testing.T) bridgetest.Harness {
		b, fake := newBridgeAndFake(t)
		eng, err := engine.New(engine.Config{Store: b.store.(*sqlite.Store), Clock: time.Now, NewID: counter(), Agents: []*engine.Agent{bridgetest.Agent()}})
		if err != nil {
			t.Fatal(err)
		}
		b = New(b.cfg, "", eng, b.store, time.Now, slog.New(slog.NewTextHandler(io.Discard, nil)))
		_ = fake
		return bridgetest.Harness{
			Engine: b.eng,
			Origin: engine.OriginLinear,
			Message: func(t *testing.T, thread, eventKey, text string) string {
				key := linearhook.ThreadKey("as-" + thread)
				it := linearhook.Item{Kind: linearhook.KindPrompted, SessionID: "as-" + thread, ThreadKey: key,
					EventKey: eventKey, Text: text, UserID: "u-1"}
				payload, err := json.Marshal(it)
				if err != nil {
					t.Fatal(err)
				}
				if err := b.handle(context.Background(), store.Inbound{Source: InboxSource, ThreadKey: key, Payload: payload}); err != nil {
					t.Fatal(err)
				}
				return key
			},
			SessionOf: func(t *testing.T, key string) (engine.Session, bool) {
				s, err := b.store.SessionByThread(context.Background(), key)
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
