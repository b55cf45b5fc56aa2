package fakemodel

import (
	"strings"
	"sync"
	"testing"
	"time"
)

// TestFakeModel_SlowlyStreamsPieces: a slow step streams its text in
// pieces of the given size, each flushed (OnPiece sees them in order),
// with the headers of a stream; the step it was made from is unchanged.
func TestFakeModel_SlowlyStreamsPieces(t *testing.T) {
	s := newServer(t)
	var mu sync.Mutex
	var pieces []string
	base := Text("abcdefgh")
	s.Push(base.Slowly(3, 5*time.Millisecond).OnPiece(func(i int, text string) {
		mu.Lock()
		defer mu.Unlock()
		if i != len(pieces) {
			t.Errorf("piece %d arrived as number %d", i, len(pieces))
		}
		pieces = append(pieces, text)
	}))
	r := post(t, s.URL()+"/v1/messages", anthropicRequest(true))
	if r.status != 200 || r.header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("got %d %s", r.status, r.header.Get("Content-Type"))
	}
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(pieces, "|") != "abc|def|gh" {
		t.Fatalf("pieces %q", pieces)
	}
	for _, want := range []string{`"text":"abc"`, `"text":"def"`, `"text":"gh"`} {
		if !strings.Contains(r.body, want) {
			t.Errorf("stream lacks %s", want)
		}
	}
	if base.pace != nil {
		t.Error("Slowly changed the step it was called on")
	}
	// OpenAI streams pieces too.
	s.Push(Text("abcdefgh").Slowly(4, 0))
	r = post(t, s.URL()+"/v1/chat/completions", strings.Replace(openaiBody, `"model":"m",`, `"model":"m","stream":true,`, 1))
	if !strings.Contains(r.body, `"content":"abcd"`) || !strings.Contains(r.body, `"content":"efgh"`) {
		t.Errorf("openai stream %s", r.body)
	}
}
