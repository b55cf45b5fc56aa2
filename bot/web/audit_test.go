package web

import (
	"context"
	"errors"
	"net/http"
	"testing"
)

// fakeAuditor records what the console audits; RecordFunc, when set,
// decides the answer.
type fakeAuditor struct {
	acts       []string
	RecordFunc func(actor, action, target string) error
}

func (f *fakeAuditor) Record(_ context.Context, actor, action, target string, _ any) error {
	if f.RecordFunc != nil {
		if err := f.RecordFunc(actor, action, target); err != nil {
			return err
		}
	}
	f.acts = append(f.acts, actor+" "+action+" "+target)
	return nil
}

var _ Auditor = (*fakeAuditor)(nil)

// TestConsole_SignInAudited: a key sign-in is in the audit trail under the
// key's name; a wrong key is not; a sign-in that cannot be recorded is
// refused and lets nobody in.
func TestConsole_SignInAudited(t *testing.T) {
	a := &fakeAuditor{}
	cfg := keyed()
	cfg.Audit = a
	c := newConsole(t, cfg)
	c.get("/login")
	if resp := c.signIn("wrong"); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("a wrong key: %d", resp.StatusCode)
	}
	if resp := c.signIn(testKey); resp.StatusCode != http.StatusOK {
		t.Fatalf("sign-in: %d", resp.StatusCode)
	}
	if len(a.acts) != 1 || a.acts[0] != "ops console.signed_in console" {
		t.Errorf("audited %q, want the one sign-in by ops", a.acts)
	}

	broken := &fakeAuditor{RecordFunc: func(string, string, string) error { return errors.New("database down") }}
	cfg = keyed()
	cfg.Audit = broken
	c = newConsole(t, cfg)
	c.get("/login")
	if resp := c.signIn(testKey); resp.StatusCode != http.StatusInternalServerError {
		t.Fatalf("sign-in that cannot be audited: %d, want 500", resp.StatusCode)
	}
	if resp, _ := c.get("/sessions"); resp.StatusCode != http.StatusSeeOther {
		t.Errorf("after a refused sign-in /sessions = %d, want the redirect to sign in", resp.StatusCode)
	}
}
