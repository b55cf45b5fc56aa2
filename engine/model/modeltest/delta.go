package modeltest

import (
	"strings"
	"sync"
	"testing"

	"brain/engine"
	"brain/engine/model/fakemodel"
)

// deltas: with OnDelta set, the answer's text arrives in pieces, in order,
// while the model is still writing (the fake pauses after two pieces and
// the test sees them before letting it go on); the pieces add up to the
// answer, and tool calls still come through.
func (s Suite) deltas(t *testing.T) {
	srv := NewServer(t)
	const text = "Streaming, piece by piece: ünïcode too."
	pause := make(chan struct{})
	srv.Push(fakemodel.TextAndTools(text, fakemodel.Call{Name: "weather", Input: `{"city":"Paris"}`}).
		Slowly(5, 0).PauseAfter(2, pause))
	m := s.model(t, srv, nil)

	var mu sync.Mutex
	var got []string
	two := make(chan struct{})
	req := UserText("hi")
	req.OnDelta = func(d string) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, d)
		if len(got) == 2 {
			close(two)
		}
	}
	type result struct {
		resp engine.ModelResponse
		err  error
	}
	done := make(chan result, 1)
	go func() {
		resp, err := m.Generate(t.Context(), req)
		done <- result{resp, err}
	}()
	select {
	case <-two:
	case r := <-done:
		t.Fatalf("Generate returned (%v) before the first pieces were handed on", r.err)
	}
	mu.Lock()
	if early := strings.Join(got, ""); early != "Strea"+"ming," {
		t.Errorf("first pieces = %q, want %q", early, "Streaming,")
	}
	mu.Unlock()
	close(pause)
	r := <-done
	if r.err != nil {
		t.Fatalf("Generate: %v", r.err)
	}
	mu.Lock()
	defer mu.Unlock()
	if joined := strings.Join(got, ""); joined != text || r.resp.Text != text {
		t.Errorf("deltas %q, text %q; want both %q", joined, r.resp.Text, text)
	}
	if len(got) < 3 {
		t.Errorf("got %d pieces, want the text in several", len(got))
	}
	if len(r.resp.ToolCalls) != 1 || r.resp.ToolCalls[0].Name != "weather" {
		t.Errorf("tool calls = %+v, want the weather call", r.resp.ToolCalls)
	}
	if !srv.Requests()[0].Stream {
		t.Errorf("the request did not ask for a stream")
	}
}
