package modeltest

import (
	"encoding/json"
	"errors"
	"maps"
	"reflect"
	"slices"
	"testing"

	"brain/engine"
	"brain/engine/model/fakemodel"
)

// NewServer starts a fake model server that t closes.
func NewServer(t testing.TB, opts ...fakemodel.Option) *fakemodel.Server {
	t.Helper()
	srv := fakemodel.New(opts...)
	t.Cleanup(srv.Close)
	return srv
}

// UserText is a request of one user message.
func UserText(text string) engine.ModelRequest {
	return engine.ModelRequest{Messages: []engine.Message{{Role: engine.RoleUser, Text: text}}}
}

// ProviderError asserts that err is an *engine.ProviderError with code and
// transience, and returns it.
func ProviderError(t testing.TB, err error, code string, transient bool) *engine.ProviderError {
	t.Helper()
	var pe *engine.ProviderError
	if !errors.As(err, &pe) {
		t.Fatalf("error %v (%T) is not a ProviderError", err, err)
	}
	if pe.Code != code || pe.Transient != transient {
		t.Fatalf("got code %q transient %v, want %q %v (%v)", pe.Code, pe.Transient, code, transient, pe)
	}
	return pe
}

// AssertJSON compares JSON documents by value.
func AssertJSON(t testing.TB, got []byte, want string) {
	t.Helper()
	if !equalJSON(t, got, []byte(want)) {
		t.Fatalf("JSON differs\n got: %s\nwant: %s", got, want)
	}
}

// assertBody checks the top-level keys that want names against a request
// body; null in want stands for absent. See Wire.
func assertBody(t testing.TB, body []byte, want string) {
	t.Helper()
	got, w := jsonObject(t, body), jsonObject(t, []byte(want))
	for _, k := range slices.Sorted(maps.Keys(w)) {
		g, ok := got[k]
		if !ok {
			g = json.RawMessage("null")
		}
		if !equalJSON(t, g, w[k]) {
			t.Errorf("request body %q differs\n got: %s\nwant: %s", k, g, w[k])
		}
	}
}

// maxTokens is the answer cap a request body carries under key.
func maxTokens(t testing.TB, body []byte, key string) int {
	t.Helper()
	var n int
	if err := json.Unmarshal(jsonObject(t, body)[key], &n); err != nil {
		t.Fatalf("no answer cap %q in %s: %v", key, body, err)
	}
	return n
}

func jsonObject(t testing.TB, doc []byte) map[string]json.RawMessage {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(doc, &m); err != nil || m == nil {
		t.Fatalf("not a JSON object: %s (%v)", doc, err)
	}
	return m
}

func equalJSON(t testing.TB, a, b []byte) bool {
	t.Helper()
	var va, vb any
	if err := json.Unmarshal(a, &va); err != nil {
		t.Fatalf("invalid JSON %s: %v", a, err)
	}
	if err := json.Unmarshal(b, &vb); err != nil {
		t.Fatalf("invalid JSON %s: %v", b, err)
	}
	return reflect.DeepEqual(va, vb)
}
