package api

import (
	"encoding/json"
	"strings"
	"testing"

	"brain/engine"
)

// FuzzParseEventRequest feeds arbitrary bytes to the user.message decoder:
// it must never panic, and anything it accepts must be a well-formed input.
func FuzzParseEventRequest(f *testing.F) {
	for _, seed := range []string{
		`{"type":"user.message","text":"hello"}`,
		`{"type":"user.message","text":"hi","idempotency_key":"k","mode":"interrupt","author":"ann"}`,
		`{"type":"user.message","text":""}`,
		`{"type":"agent.message","text":"x"}`,
		`{"type":"user.message","text":"x","extra":true}`,
		`{"type":"user.message","text":"x"} {"again":1}`,
		`{"type":"user.message","text":"\u0000\ud800"}`,
		`[]`, `null`, `"string"`, `{`, ``,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		in, err := parseEventRequest(body)
		if err != nil {
			if engine.CodeOf(err) != engine.CodeInvalid {
				t.Fatalf("decode error with code %s: %v", engine.CodeOf(err), err)
			}
			return
		}
		if strings.TrimSpace(in.Text) == "" || len(in.IdempotencyKey) > 255 {
			t.Fatalf("accepted an invalid input: %+v", in)
		}
		if !json.Valid(body) {
			t.Fatalf("accepted invalid JSON: %q", body)
		}
	})
}

// FuzzDecodeCreateSession does the same for POST /v1/sessions bodies.
func FuzzDecodeCreateSession(f *testing.F) {
	for _, seed := range []string{
		`{}`, `{"agent":"default","message":"hi","interactive":false,"started_by":"ann"}`,
		`{"interactive":"yes"}`, `{"agent":1}`, `{"unknown":1}`, `nul`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var req createSessionRequest
		if err := decodeJSON(body, &req); err != nil {
			if engine.CodeOf(err) != engine.CodeInvalid {
				t.Fatalf("decode error with code %s: %v", engine.CodeOf(err), err)
			}
			return
		}
		if !json.Valid(body) {
			t.Fatalf("accepted invalid JSON: %q", body)
		}
	})
}
