package githubhook

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// memInbox dedupes on delivery and event key, as the durable inbox does.
type memInbox struct {
	mu    sync.Mutex
	seen  map[string]bool
	items []Item
	err   error
}

func (m *memInbox) Record(_ context.Context, it Item) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.err != nil {
		return false, m.err
	}
	if m.seen == nil {
		m.seen = map[string]bool{}
	}
	if m.seen[it.DeliveryID] || m.seen[it.EventKey] {
		return true, nil
	}
	m.seen[it.DeliveryID], m.seen[it.EventKey] = true, true
	m.items = append(m.items, it)
	return false, nil
}

func deliver(h http.Handler, event, delivery, sig string, body []byte) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodPost, "/github/webhook", strings.NewReader(string(body)))
	req.Header.Set(HeaderEvent, event)
	req.Header.Set(HeaderDelivery, delivery)
	req.Header.Set(HeaderSignature, sig)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func TestHandler(t *testing.T) {
	const secret = "It's a Secret to Everybody"
	body := exampleWith(t, "issue_comment", "created", func(m map[string]any) {
		m["comment"].(map[string]any)["body"] = "@brain hello"
	})
	in := &memInbox{}
	h := &Handler{Secret: secret, Inbox: in, Self: "brain[bot]"}

	if rec := deliver(h, "issue_comment", "d-1", Signature("wrong", body), body); rec.Code != http.StatusUnauthorized {
		t.Fatalf("forged: %d", rec.Code)
	}
	if rec := deliver(h, "issue_comment", "d-1", "", body); rec.Code != http.StatusUnauthorized {
		t.Fatalf("unsigned: %d", rec.Code)
	}
	if len(in.items) != 0 {
		t.Fatal("a forged delivery was recorded")
	}
	if rec := deliver(h, "issue_comment", "d-1", Signature(secret, body), body); rec.Code != http.StatusOK {
		t.Fatalf("signed: %d %s", rec.Code, rec.Body)
	}
	if rec := deliver(h, "issue_comment", "d-1", Signature(secret, body), body); rec.Code != http.StatusAccepted {
		t.Fatalf("redelivery: %d", rec.Code)
	}
	if len(in.items) != 1 || in.items[0].DeliveryID != "d-1" || in.items[0].Text != "@brain hello" {
		t.Fatalf("items %+v", in.items)
	}

	self := exampleWith(t, "issue_comment", "created", func(m map[string]any) {
		m["comment"].(map[string]any)["id"] = 77
		m["comment"].(map[string]any)["user"] = map[string]any{"login": "Brain[bot]", "type": "User"}
	})
	if rec := deliver(h, "issue_comment", "d-2", Signature(secret, self), self); rec.Code != http.StatusOK || len(in.items) != 1 {
		t.Fatalf("own comment: %d, %d items", rec.Code, len(in.items))
	}
	if rec := deliver(h, "ping", "d-3", Signature(secret, []byte(`{}`)), []byte(`{}`)); rec.Code != http.StatusOK {
		t.Fatalf("ping: %d", rec.Code)
	}
	if rec := deliver(h, "issue_comment", "d-4", Signature(secret, []byte(`{"action":"created"}`)), []byte(`{"action":"created"}`)); rec.Code != http.StatusBadRequest {
		t.Fatalf("broken: %d", rec.Code)
	}

	small := &Handler{Secret: secret, Inbox: in, MaxBody: 10}
	if rec := deliver(small, "issue_comment", "d-5", Signature(secret, body), body); rec.Code != http.StatusRequestEntityTooLarge {
		t.Fatalf("over the cap: %d", rec.Code)
	}
	failing := &Handler{Secret: secret, Inbox: &memInbox{err: errors.New("disk full")}}
	if rec := deliver(failing, "issue_comment", "d-6", Signature(secret, body), body); rec.Code != http.StatusInternalServerError {
		t.Fatalf("inbox down: %d", rec.Code)
	}
	get := httptest.NewRecorder()
	h.ServeHTTP(get, httptest.NewRequest(http.MethodGet, "/github/webhook", nil))
	if get.Code != http.StatusMethodNotAllowed {
		t.Fatalf("GET: %d", get.Code)
	}
}
