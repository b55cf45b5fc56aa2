package slackhook

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/socketmode"

	"github.com/gorilla/websocket"
)

// socketFrame is a Socket Mode request frame as Slack sends it.
func socketFrame(t testing.TB, typ, envelopeID string, payload []byte, retry int) []byte {
	t.Helper()
	b, err := json.Marshal(map[string]any{
		"type": typ, "envelope_id": envelopeID, "payload": json.RawMessage(payload),
		"accepts_response_payload": false, "retry_attempt": retry, "retry_reason": "",
	})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestSocketItems(t *testing.T) {
	mention := envelopeJSON(t, "Ev1", `{"type":"app_mention","user":"U1","text":"<@UBOT> hi","ts":"3.2","thread_ts":"3.0","channel":"C1"}`)
	tests := []struct {
		name      string
		req       socketmode.Request
		wantItems int
		wantErr   bool
	}{
		{"events_api mention", socketmode.Request{Type: "events_api", EnvelopeID: "e1", Payload: mention}, 1, false},
		{"events_api bot message", socketmode.Request{Type: "events_api", EnvelopeID: "e1",
			Payload: envelopeJSON(t, "Ev2", `{"type":"message","channel":"C1","user":"U2","bot_id":"B1","text":"hi","ts":"1.1"}`)}, 0, false},
		{"interactive block_actions", socketmode.Request{Type: "interactive", EnvelopeID: "e2", Payload: []byte(blockActionsJSON)}, 1, false},
		{"slash command", socketmode.Request{Type: "slash_commands", EnvelopeID: "e3", Payload: []byte(`{"command":"/x"}`)}, 0, false},
		{"garbage payload", socketmode.Request{Type: "events_api", EnvelopeID: "e4", Payload: []byte(`"oops"`)}, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			items, err := socketItems(&tt.req, botID)
			if (err != nil) != tt.wantErr || len(items) != tt.wantItems {
				t.Fatalf("items %d err %v", len(items), err)
			}
			for _, it := range items {
				checkWellFormed(t, it)
			}
		})
	}
	// The socket and HTTP paths produce the same Item.
	items, _ := socketItems(&socketmode.Request{Type: "events_api", Payload: mention}, botID)
	res, _ := ParseEvent(mention, botID)
	if mustJSON(t, items[0]) != mustJSON(t, *res.Item) {
		t.Fatalf("socket %s\nhttp %s", mustJSON(t, items[0]), mustJSON(t, *res.Item))
	}
}

// fakeSocketSlack is a local stand-in for Slack's Socket Mode: the
// apps.connections.open method and a websocket endpoint, driven by the test.
type fakeSocketSlack struct {
	srv   *httptest.Server
	conns chan *websocket.Conn
}

func newFakeSocketSlack(t *testing.T, openResponse string) *fakeSocketSlack {
	t.Helper()
	f := &fakeSocketSlack{conns: make(chan *websocket.Conn, 4)}
	upgrader := websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/apps.connections.open":
			if got := r.Header.Get("Authorization"); got != "Bearer xapp-test" {
				t.Errorf("apps.connections.open authorization %q", got)
			}
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(strings.ReplaceAll(openResponse, "HOST", r.Host)))
		case "/ws":
			conn, err := upgrader.Upgrade(w, r, nil)
			if err != nil {
				t.Errorf("upgrade: %v", err)
				return
			}
			f.conns <- conn
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeSocketSlack) client(t *testing.T) *socketmode.Client {
	t.Helper()
	api := slack.New("xoxb-test", slack.OptionAppLevelToken("xapp-test"), slack.OptionAPIURL(f.srv.URL+"/"))
	return socketmode.New(api)
}

// readAck reads the next frame from the client and returns its envelope id.
func readAck(t *testing.T, conn *websocket.Conn) string {
	t.Helper()
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	var ack struct {
		EnvelopeID string          `json:"envelope_id"`
		Payload    json.RawMessage `json:"payload"`
	}
	if err := conn.ReadJSON(&ack); err != nil {
		t.Fatalf("read ack: %v", err)
	}
	return ack.EnvelopeID
}

func TestRunSocketMode_RecordsThenAcks(t *testing.T) {
	fake := newFakeSocketSlack(t, `{"ok":true,"url":"ws://HOST/ws"}`)
	var (
		mu       sync.Mutex
		recorded []Item
		failOnce = true
	)
	inbox := &fakeInbox{RecordFunc: func(_ context.Context, it Item) (bool, error) {
		mu.Lock()
		defer mu.Unlock()
		if failOnce && it.Kind() == KindMessage && it.Message().EventID == "Ev1" {
			failOnce = false
			return false, errors.New("database is locked")
		}
		recorded = append(recorded, it)
		return false, nil
	}}
	ctx, cancel := context.WithCancel(context.Background())
	var runErr error
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		runErr = RunSocketMode(ctx, fake.client(t), inbox, botID, testLogger(t))
	}()
	t.Cleanup(func() { cancel(); <-finished }) // no logging after the test ends

	var conn *websocket.Conn
	select {
	case conn = <-fake.conns:
	case <-time.After(5 * time.Second):
		t.Fatal("client never connected")
	}
	defer conn.Close()
	send := func(frame []byte) {
		t.Helper()
		if err := conn.WriteMessage(websocket.TextMessage, frame); err != nil {
			t.Fatalf("write: %v", err)
		}
	}
	send([]byte(`{"type":"hello","num_connections":1,"debug_info":{"host":"test"},"connection_info":{"app_id":"A1"}}`))

	mention := envelopeJSON(t, "Ev1", `{"type":"app_mention","user":"U1","text":"<@UBOT> hi","ts":"3.2","channel":"C1"}`)
	// e1's Record fails: no ack, so the next ack seen is e2's.
	send(socketFrame(t, "events_api", "e1", mention, 0))
	send(socketFrame(t, "events_api", "e2", envelopeJSON(t, "Ev2", `{"type":"message","channel_type":"im","user":"U1","text":"dm","ts":"4.1","channel":"D1"}`), 0))
	if got := readAck(t, conn); got != "e2" {
		t.Fatalf("first ack %q, want e2 (e1 must stay unacked)", got)
	}
	// Slack redelivers e1; now it is recorded and acked.
	send(socketFrame(t, "events_api", "e1", mention, 1))
	if got := readAck(t, conn); got != "e1" {
		t.Fatalf("ack %q, want e1", got)
	}
	send(socketFrame(t, "interactive", "e3", []byte(blockActionsJSON), 0))
	if got := readAck(t, conn); got != "e3" {
		t.Fatalf("ack %q, want e3", got)
	}
	// An inner event type slack-go does not know fails its parser; the
	// request must still be acked, not redelivered forever.
	send(socketFrame(t, "events_api", "e4", envelopeJSON(t, "Ev4", `{"type":"brand_new_event","user":"U1"}`), 0))
	if got := readAck(t, conn); got != "e4" {
		t.Fatalf("ack %q, want e4", got)
	}
	send(socketFrame(t, "slash_commands", "e5", []byte(`{"command":"/brain","text":"hi","user_id":"U1","channel_id":"C1","team_id":"T1"}`), 0))
	if got := readAck(t, conn); got != "e5" {
		t.Fatalf("ack %q, want e5", got)
	}

	cancel()
	select {
	case <-finished:
		if runErr != nil {
			t.Fatalf("RunSocketMode after cancel: %v", runErr)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("RunSocketMode did not return after cancel")
	}
	mu.Lock()
	defer mu.Unlock()
	var keys []string
	for _, it := range recorded {
		checkWellFormed(t, it)
		keys = append(keys, it.ThreadKey)
	}
	want := []string{"slack:T1:D1:4.1", "slack:T1:C1:3.2", "slack:T1:C1:9.0"}
	if strings.Join(keys, " ") != strings.Join(want, " ") {
		t.Fatalf("recorded %v, want %v", keys, want)
	}
}

func TestRunSocketMode_InvalidAuth(t *testing.T) {
	fake := newFakeSocketSlack(t, `{"ok":false,"error":"invalid_auth"}`)
	inbox, _ := newRecorder(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := RunSocketMode(ctx, fake.client(t), inbox, botID, nil)
	if err == nil || !strings.Contains(err.Error(), "invalid_auth") {
		t.Fatalf("err = %v, want invalid_auth", err)
	}
}

// TestSocket_RunsUntilCancel: a Socket from NewSocket connects with the
// app token's URL and returns nil once its ctx is canceled.
func TestSocket_RunsUntilCancel(t *testing.T) {
	fake := newFakeSocketSlack(t, `{"ok":true,"url":"ws://HOST/ws"}`)
	api := slack.New("xoxb-test", slack.OptionAppLevelToken("xapp-test"), slack.OptionAPIURL(fake.srv.URL+"/"))
	ctx, cancel := context.WithCancel(context.Background())
	finished := make(chan error, 1)
	go func() { finished <- NewSocket(api).Run(ctx, &fakeInbox{}, botID, testLogger(t)) }()
	select {
	case conn := <-fake.conns:
		defer conn.Close()
	case <-time.After(5 * time.Second):
		t.Fatal("the socket never connected")
	}
	cancel()
	select {
	case err := <-finished:
		if err != nil {
			t.Fatalf("Run after cancel: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after cancel")
	}
}
