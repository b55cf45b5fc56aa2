package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"brain/engine"
)

// TestWriteError pins the code -> status table and what a person reads:
// the coded error's message, whatever wrapped it, and "internal error" for
// anything without a known code (logged with the request id).
func TestWriteError(t *testing.T) {
	cases := []struct {
		name    string
		err     error
		status  int
		code    string
		message string
	}{
		{"invalid", engine.Errorf(engine.CodeInvalid, "text is required"), 400, "invalid_request", "text is required"},
		{"unauthorized", engine.Errorf(engine.CodeUnauthorized, "key needed"), 401, "unauthorized", "key needed"},
		{"forbidden", engine.Errorf(engine.CodeForbidden, "not yours"), 403, "forbidden", "not yours"},
		{"not found", engine.Errorf(engine.CodeNotFound, "no session ses_1"), 404, "not_found", "no session ses_1"},
		{"method", engine.Errorf(engine.CodeMethodNotAllowed, "DELETE is not allowed"), 405, "method_not_allowed", "DELETE is not allowed"},
		{"conflict", engine.Errorf(engine.CodeConflict, "already decided by ann"), 409, "conflict", "already decided by ann"},
		{"too large", engine.Errorf(engine.CodeTooLarge, "over the limit"), 413, "too_large", "over the limit"},
		{"overloaded", engine.Errorf(engine.CodeOverloaded, "queue full"), 429, "overloaded", "queue full"},
		{"sentinel", engine.ErrNotFound, 404, "not_found", ""},
		{"wrapped coded keeps its message", fmt.Errorf("resume ses_1: %w", engine.Errorf(engine.CodeConflict, "resume the interrupted session first")), 409, "conflict", "resume the interrupted session first"},
		{"coded internal", engine.Errorf(engine.CodeInternal, "disk full"), 500, "internal", "internal error"},
		{"unknown code", engine.Errorf("teapot", "short and stout"), 500, "internal", "internal error"},
		{"plain", errors.New("sql: database is closed"), 500, "internal", "internal error"},
		{"wrapped plain", fmt.Errorf("load session: %w", errors.New("sql: database is closed")), 500, "internal", "internal error"},
		{"store invariant", fmt.Errorf("commit: %w: event 0 has no id", engine.ErrInvariant), 500, "internal", "internal error"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var logs bytes.Buffer
			log := slog.New(slog.NewTextHandler(&logs, nil))
			r := httptest.NewRequest("GET", "/v1/sessions/ses_1", nil)
			r = r.WithContext(context.WithValue(r.Context(), requestIDKey, "0123456789abcdef0123456789abcdef"))
			w := httptest.NewRecorder()
			writeError(w, r, log, c.err)

			if w.Code != c.status {
				t.Fatalf("status %d, want %d", w.Code, c.status)
			}
			var env ErrorEnvelope
			if err := json.Unmarshal(w.Body.Bytes(), &env); err != nil {
				t.Fatalf("not an envelope: %s", w.Body)
			}
			if env.Error.Code != c.code || env.Error.Message != c.message || env.RequestID != "0123456789abcdef0123456789abcdef" {
				t.Fatalf("envelope %+v, want code %q message %q", env, c.code, c.message)
			}
			if got := w.Header().Get("Retry-After"); (c.status == 429) != (got == "1") {
				t.Fatalf("Retry-After %q with status %d", got, c.status)
			}
			logged := strings.Contains(logs.String(), "request failed") &&
				strings.Contains(logs.String(), "request_id=0123456789abcdef0123456789abcdef")
			if logged != (c.status == 500) {
				t.Fatalf("logged %v with status %d:\n%s", logged, c.status, logs.String())
			}
		})
	}
}

// TestHTTPStatus_EveryCode keeps the table complete: every code of the
// engine's const block has its own status.
func TestHTTPStatus_EveryCode(t *testing.T) {
	for _, code := range []string{
		engine.CodeInvalid, engine.CodeUnauthorized, engine.CodeForbidden, engine.CodeNotFound,
		engine.CodeMethodNotAllowed, engine.CodeConflict, engine.CodeTooLarge, engine.CodeOverloaded,
		engine.CodeInternal,
	} {
		if _, ok := httpStatus[code]; !ok {
			t.Errorf("code %q has no HTTP status", code)
		}
	}
	if got := httpStatus[engine.CodeInternal]; got != http.StatusInternalServerError {
		t.Errorf("internal maps to %d", got)
	}
}
