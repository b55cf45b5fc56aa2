package github

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"brain/engine"
	"brain/store"
	"brain/tools"
)

// memCards is the store's PostedMessages for cards, in memory; the
// drivers' own behaviour is the store conformance suite's business.
type memCards struct {
	mu   sync.Mutex
	refs map[string]string
}

func (m *memCards) ApprovalMessage(_ context.Context, p engine.Origin, id string) (string, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	ref, ok := m.refs[string(p)+"/"+id]
	return ref, ok, nil
}

func (m *memCards) SetApprovalMessage(_ context.Context, _ time.Time, p engine.Origin, id, ref string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.refs[string(p)+"/"+id] = ref
	return nil
}

func (m *memCards) PostedQuestion(context.Context, engine.Origin, string) (store.PostedQuestion, bool, error) {
	return store.PostedQuestion{}, false, nil
}

func (m *memCards) SetPostedQuestion(context.Context, time.Time, engine.Origin, string, store.PostedQuestion) error {
	return nil
}

func (m *memCards) ClearPostedQuestion(context.Context, engine.Origin, string) error { return nil }

type oneApproval struct{ a engine.Approval }

func (o oneApproval) Approval(context.Context, string) (engine.Approval, error) { return o.a, nil }

// TestRenderer_CardSurvivesRestart: a renderer that starts after the card
// was posted (a restart) edits that card, keeping its earlier notes,
// instead of commenting beside it.
func TestRenderer_CardSurvivesRestart(t *testing.T) {
	var mu sync.Mutex
	var posts, edits []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var in struct{ Body string }
		_ = json.Unmarshal(body, &in)
		mu.Lock()
		defer mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.Method == http.MethodPost && r.URL.Path == "/repos/acme/web/issues/3/comments":
			posts = append(posts, in.Body)
			w.WriteHeader(http.StatusCreated)
			_, _ = w.Write([]byte(`{"id":777,"body":"x"}`))
		case r.Method == http.MethodPatch && r.URL.Path == "/repos/acme/web/issues/comments/777":
			edits = append(edits, in.Body)
			_, _ = w.Write([]byte(`{"id":777,"body":"x"}`))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	client, err := New(srv.URL, "tok", srv.Client(), time.Now)
	if err != nil {
		t.Fatal(err)
	}
	cards := &memCards{refs: map[string]string{}}
	a := engine.Approval{ID: "apr_1", SessionID: "ses_1", Tool: "deploy", Status: engine.ApprovalPending, Card: tools.Card{Title: "Deploy"}}
	newRenderer := func() *Renderer {
		return &Renderer{Engine: oneApproval{a}, Client: client, Cards: cards, Origin: "github", MinEdit: -1, Log: slog.New(slog.DiscardHandler)}
	}
	s := engine.Session{ID: "ses_1", ThreadKey: Thread{Owner: "acme", Repo: "web", Number: 3}.Key()}
	render := func(r *Renderer, p engine.Payload) {
		t.Helper()
		ev, err := engine.NewEvent(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := r.Render(context.Background(), s, ev); err != nil {
			t.Fatal(err)
		}
	}
	first := newRenderer()
	render(first, engine.ApprovalRequested{ApprovalID: "apr_1"})
	render(first, engine.ApprovalVoted{ApprovalID: "apr_1", By: "alice", Count: 1, Required: 2})

	restarted := newRenderer()
	render(restarted, engine.ApprovalDecided{ApprovalID: "apr_1", By: "bob", Decision: engine.DecisionApprove})

	mu.Lock()
	defer mu.Unlock()
	if len(posts) != 1 {
		t.Fatalf("%d comments posted, want the card only: %q", len(posts), posts)
	}
	if len(edits) != 2 {
		t.Fatalf("%d edits of the card, want 2: %q", len(edits), edits)
	}
	last := edits[1]
	if !strings.Contains(last, "1 of 2 approvals, the latest by @alice") || !strings.Contains(last, "Approved by @bob") {
		t.Fatalf("after the restart the card lost a note:\n%s", last)
	}
}
