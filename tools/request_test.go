package tools

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"testing"
	"time"
)

type timeoutErr struct{}

func (timeoutErr) Error() string { return "awaiting headers" }
func (timeoutErr) Timeout() bool { return true }

func TestRequestFailure(t *testing.T) {
	errMine := errors.New("mine timed out")
	own, cancelOwn := context.WithTimeoutCause(context.Background(), 0, errMine)
	defer cancelOwn()
	deadline, cancelDeadline := context.WithTimeout(context.Background(), 0)
	defer cancelDeadline()
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	bare := errors.New("connection reset")
	wrapped := &url.Error{Op: "Get", URL: "https://x.test/?key=k", Err: bare}
	for _, tc := range []struct {
		name string
		ctx  context.Context
		err  error
		want string
	}{
		{"own timeout", own, wrapped, "timed out after 5s"},
		{"call deadline", deadline, wrapped, "timed out: the call's deadline passed"},
		{"cancelled", cancelled, wrapped, "cancelled"},
		{"url error loses its URL", context.Background(), wrapped, "connection reset"},
		{"transport timeout", context.Background(), &url.Error{Op: "Get", URL: "https://x.test/", Err: timeoutErr{}}, "timed out: awaiting headers"},
		{"plain error", context.Background(), bare, "connection reset"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := RequestFailure(tc.ctx, tc.err, errMine, 5*time.Second); got != tc.want {
				t.Fatalf("RequestFailure = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestDialFailed(t *testing.T) {
	dial := &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("refused")}
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"dial", &url.Error{Op: "Get", URL: "http://x.test", Err: dial}, true},
		{"dial to the proxy", &net.OpError{Op: "proxyconnect", Net: "tcp", Err: dial}, true},
		{"read", &net.OpError{Op: "read", Net: "tcp", Err: errors.New("reset")}, false},
		{"not a net error", fmt.Errorf("wrapped: %w", errors.New("EOF")), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := DialFailed(tc.err); got != tc.want {
				t.Fatalf("DialFailed(%v) = %v, want %v", tc.err, got, tc.want)
			}
		})
	}
}

func TestMarshalUnescaped(t *testing.T) {
	got, err := MarshalUnescaped(map[string]string{"html": "<b>&</b>"})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"html":"<b>&</b>"}`; string(got) != want {
		t.Fatalf("MarshalUnescaped = %s, want %s", got, want)
	}
}
