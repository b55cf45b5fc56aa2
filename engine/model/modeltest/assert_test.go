package modeltest

import (
	"runtime"
	"testing"
)

// recorder is a testing.TB that notes failures instead of reporting them.
type recorder struct {
	testing.TB
	failed bool
}

func (r *recorder) Helper()               {}
func (r *recorder) Errorf(string, ...any) { r.failed = true }
func (r *recorder) Fatalf(string, ...any) { r.failed = true; runtime.Goexit() }

// fails reports whether check fails on a recorder.
func fails(t *testing.T, check func(testing.TB)) bool {
	t.Helper()
	r := &recorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		check(r)
	}()
	<-done
	return r.failed
}

func TestAssertBody(t *testing.T) {
	tests := []struct {
		name, body, want string
		fails            bool
	}{
		{"named key equal", `{"a":1,"b":2}`, `{"a":1}`, false},
		{"named key differs", `{"a":1,"b":2}`, `{"a":2}`, true},
		{"compared by value", `{"a":{"x":[1,2],"y":"z"}}`, `{"a":{"y":"z","x":[1,2]}}`, false},
		{"order in arrays counts", `{"a":[1,2]}`, `{"a":[2,1]}`, true},
		{"null is absent", `{"a":1}`, `{"b":null}`, false},
		{"null is not false", `{"b":false}`, `{"b":null}`, true},
		{"missing key", `{"a":1}`, `{"b":1}`, true},
		{"body not an object", `[1]`, `{"a":1}`, true},
		{"want not an object", `{"a":1}`, `"a"`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := fails(t, func(tb testing.TB) { assertBody(tb, []byte(tt.body), tt.want) })
			if got != tt.fails {
				t.Fatalf("assertBody(%s, %s) failed: %v, want %v", tt.body, tt.want, got, tt.fails)
			}
		})
	}
}

func TestMaxTokens(t *testing.T) {
	if got := maxTokens(t, []byte(`{"max_tokens":77}`), "max_tokens"); got != 77 {
		t.Fatalf("got %d, want 77", got)
	}
	if !fails(t, func(tb testing.TB) { maxTokens(tb, []byte(`{"max_completion_tokens":77}`), "max_tokens") }) {
		t.Fatal("a missing cap passed")
	}
}
