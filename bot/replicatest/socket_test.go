package replicatest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"brain/channels/slack/slackfake"
	"brain/engine"
	"brain/store/postgres/pgtest"
)

// socketSlack is Slack for Socket Mode: apps.connections.open and the
// websocket each replica connects to, in front of slackfake's Web API.
type socketSlack struct {
	srv   *httptest.Server
	conns chan *websocket.Conn
}

func newSocketSlack(t *testing.T, web *slackfake.Server) *socketSlack {
	t.Helper()
	f := &socketSlack{conns: make(chan *websocket.Conn, 8)}
	target, _ := url.Parse(web.URL())
	proxy := httputil.NewSingleHostReverseProxy(target)
	upgrader := websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/api/apps.connections.open":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"ok":true,"url":"ws://%s/ws"}`, r.Host)
		case "/ws":
			conn, err := upgrader.Upgrade(w, r, nil)
			if err != nil {
				t.Errorf("upgrade: %v", err)
				return
			}
			f.conns <- conn
		default:
			proxy.ServeHTTP(w, r)
		}
	}))
	t.Cleanup(f.srv.Close)
	return f
}

// socketConn is one replica's Socket Mode connection, with the envelope
// ids the replica acknowledged.
type socketConn struct {
	conn  *websocket.Conn
	mu    sync.Mutex
	write sync.Mutex
	acks  map[string]bool
}

func (c *socketConn) send(t *testing.T, frame any) {
	t.Helper()
	c.write.Lock()
	defer c.write.Unlock()
	if err := c.conn.WriteJSON(frame); err != nil {
		t.Fatalf("socket write: %v", err)
	}
}

func (c *socketConn) acked(id string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.acks[id]
}

// TestReplicas_SocketModeConnectionsShareTheInbox: each replica holds its
// own Socket Mode connection; Slack delivers each event on one of them
// and its retry on the other. Every envelope is acknowledged, and every
// event is one input of one session, run once.
func TestReplicas_SocketModeConnectionsShareTheInbox(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	bin := buildBrain(t, t.TempDir())
	m := &models{slow: make(chan string, 4), gate: make(chan struct{})}
	t.Cleanup(func() { close(m.gate) })
	fake := newModelServer(t, m)
	web := slackfake.New()
	t.Cleanup(web.Close)
	sock := newSocketSlack(t, web)
	rc := rigConfig{dsn: dsn, modelURL: fake, toolURL: "http://127.0.0.1:1", slackURL: sock.srv.URL, appToken: "xapp-replicas"}
	startReplica(t, bin, "a", rc)
	startReplica(t, bin, "b", rc)

	var conns []*socketConn
	for range 2 {
		select {
		case ws := <-sock.conns:
			c := &socketConn{conn: ws, acks: map[string]bool{}}
			t.Cleanup(func() { _ = ws.Close() })
			go func() {
				for {
					var ack struct {
						EnvelopeID string `json:"envelope_id"`
					}
					if err := ws.ReadJSON(&ack); err != nil {
						return
					}
					c.mu.Lock()
					c.acks[ack.EnvelopeID] = true
					c.mu.Unlock()
				}
			}()
			c.send(t, map[string]any{"type": "hello", "num_connections": 2, "debug_info": map[string]any{"host": "test"}, "connection_info": map[string]any{"app_id": "A1"}})
			conns = append(conns, c)
		case <-time.After(60 * time.Second):
			t.Fatal("a replica never opened its Socket Mode connection")
		}
	}

	const events = 6
	for n := range events {
		ts := fmt.Sprintf("1500000%03d.000100", n)
		payload, _ := json.Marshal(map[string]any{
			"type": "event_callback", "team_id": slackfake.TeamID, "event_id": fmt.Sprintf("EvS%d", n), "event_time": 1,
			"event": map[string]any{"type": "app_mention", "user": "U1", "text": "<@" + slackfake.BotUserID + "> socket " + fmt.Sprint(n), "ts": ts, "channel": "C1", "channel_type": "channel"},
		})
		for i, c := range []*socketConn{conns[n%2], conns[(n+1)%2]} {
			c.send(t, map[string]any{
				"type": "events_api", "envelope_id": fmt.Sprintf("env%d-%d", n, i), "payload": json.RawMessage(payload),
				"accepts_response_payload": false, "retry_attempt": i, "retry_reason": strings.Repeat("timeout", i),
			})
		}
	}
	for n := range events {
		for i, c := range []*socketConn{conns[n%2], conns[(n+1)%2]} {
			id := fmt.Sprintf("env%d-%d", n, i)
			waitFor(t, "ack of "+id, func() bool { return c.acked(id) })
		}
	}
	store := openStore(t, dsn)
	for n := range events {
		key := fmt.Sprintf("slack:%s:C1:1500000%03d.000100", slackfake.TeamID, n)
		var s engine.Session
		waitFor(t, "the session of "+key, func() bool {
			got, err := store.SessionByThread(context.Background(), key)
			s = got
			return err == nil
		})
		waitFor(t, "its turn", func() bool {
			evs, err := store.Events(context.Background(), s.ID, 0, 0)
			return err == nil && countType(evs, engine.EventTurnCompleted) == 1
		})
		evs, err := store.Events(context.Background(), s.ID, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		if got := countType(evs, engine.EventUserMessage); got != 1 {
			t.Errorf("%s: %d inputs, want 1 (the retry on the other connection is a duplicate)", key, got)
		}
	}
}
