package bot

import (
	"net/http"
	"strings"
	"testing"

	"brain/engine/model/fakemodel"
)

// TestAPI_EventStreamCarriesDeltas: with ?deltas=true the stream carries
// the text as the model writes it (the first words arrive while the model
// is paused), as agent.message.delta events without ids, before the
// agent.message; without it, no deltas; a bad value is a 400.
func TestAPI_EventStreamCarriesDeltas(t *testing.T) {
	ta := newTestApp(t, "", Options{})
	s := ta.createSession()
	if status, _, body := ta.do("GET", "/v1/sessions/"+s.ID+"/events?deltas=maybe", nil, "Accept", "text/event-stream"); status != http.StatusBadRequest {
		t.Fatalf("deltas=maybe: %d %s", status, body)
	}

	req, _ := http.NewRequest("GET", ta.base+"/v1/sessions/"+s.ID+"/events?deltas=true", nil)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()

	pause := make(chan struct{})
	ta.fake.Push(fakemodel.Text("Hello there, streaming world.").Slowly(6, 0).PauseAfter(2, pause))
	ta.must(http.StatusAccepted, "POST", "/v1/sessions/"+s.ID+"/events", map[string]any{"type": "user.message", "text": "hi"}, nil)

	buf := make([]byte, 0, 8192)
	chunk := make([]byte, 1024)
	readUntil := func(want string) {
		t.Helper()
		for !strings.Contains(string(buf), want) {
			n, err := resp.Body.Read(chunk)
			if err != nil {
				t.Fatalf("stream ended before %q: %v\n%s", want, err, buf)
			}
			buf = append(buf, chunk[:n]...)
		}
	}
	readUntil(`there,"`)
	if strings.Contains(string(buf), "event: agent.message\n") {
		t.Fatalf("agent.message before the model finished:\n%s", buf)
	}
	close(pause)
	readUntil("event: turn.completed")
	text := string(buf)
	if i, j := strings.Index(text, "event: agent.message.delta"), strings.Index(text, "event: agent.message\n"); i < 0 || j < i {
		t.Fatalf("deltas do not precede the agent.message:\n%s", text)
	}
	for _, frame := range strings.Split(text, "\n\n") {
		if strings.Contains(frame, "event: agent.message.delta") && strings.Contains(frame, "id: ") {
			t.Fatalf("a delta carries an id: %q", frame)
		}
	}

	// Deltas are not retained: the JSON list and a plain stream have none.
	_, _, body := ta.do("GET", "/v1/sessions/"+s.ID+"/events", nil)
	if strings.Contains(string(body), "delta") {
		t.Fatalf("stored events hold a delta: %s", body)
	}
	req2, _ := http.NewRequest("GET", ta.base+"/v1/sessions/"+s.ID+"/events", nil)
	req2.Header.Set("Accept", "text/event-stream")
	resp2, err := http.DefaultClient.Do(req2)
	if err != nil {
		t.Fatal(err)
	}
	defer resp2.Body.Close()
	var got []byte
	for !strings.Contains(string(got), "event: turn.completed") {
		n, err := resp2.Body.Read(chunk)
		if err != nil {
			t.Fatalf("replay ended: %v", err)
		}
		got = append(got, chunk[:n]...)
	}
	if strings.Contains(string(got), "delta") {
		t.Fatalf("a replay holds deltas:\n%s", got)
	}
}
