package slackhook

import (
	"errors"
	"net/http"
	"strconv"
	"testing"
	"time"
)

// Slack's documented signing example (REFERENCE.md).
const (
	docSecret    = "8f742231b10e8888abcd99yyyzzz85a5"
	docTimestamp = "1531420618"
	docBody      = "token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c"
	docSignature = "v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503"
)

var docNow = time.Unix(1531420618, 0)

func signedHeader(t testing.TB, ts, sig string) http.Header {
	t.Helper()
	h := http.Header{}
	if ts != "" {
		h.Set(HeaderTimestamp, ts)
	}
	if sig != "" {
		h.Set(HeaderSignature, sig)
	}
	return h
}

func TestSignature_DocumentedVector(t *testing.T) {
	if got := Signature(docSecret, docTimestamp, []byte(docBody)); got != docSignature {
		t.Fatalf("Signature = %s, want %s", got, docSignature)
	}
}

func TestVerify(t *testing.T) {
	body := []byte(docBody)
	tampered := []byte(docBody[:len(docBody)-1] + "d")
	tests := []struct {
		name    string
		secret  string
		header  http.Header
		body    []byte
		now     time.Time
		wantErr error
	}{
		{"documented vector", docSecret, signedHeader(t, docTimestamp, docSignature), body, docNow, nil},
		{"4m59s late still fine", docSecret, signedHeader(t, docTimestamp, docSignature), body, docNow.Add(299 * time.Second), nil},
		{"4m59s early still fine", docSecret, signedHeader(t, docTimestamp, docSignature), body, docNow.Add(-299 * time.Second), nil},
		{"wrong secret", docSecret[:len(docSecret)-1], signedHeader(t, docTimestamp, docSignature), body, docNow, ErrBadSignature},
		{"empty secret", "", signedHeader(t, docTimestamp, docSignature), body, docNow, ErrBadSignature},
		{"tampered body", docSecret, signedHeader(t, docTimestamp, docSignature), tampered, docNow, ErrBadSignature},
		{"stale", docSecret, signedHeader(t, docTimestamp, docSignature), body, docNow.Add(5*time.Minute + time.Second), ErrStale},
		{"future", docSecret, signedHeader(t, docTimestamp, docSignature), body, docNow.Add(-5*time.Minute - time.Second), ErrStale},
		{"timestamp edited", docSecret, signedHeader(t, "1531420619", docSignature), body, docNow, ErrBadSignature},
		{"no timestamp", docSecret, signedHeader(t, "", docSignature), body, docNow, ErrStale},
		{"signed timestamp", docSecret, signedHeader(t, "+1531420618", docSignature), body, docNow, ErrStale},
		{"garbled timestamp", docSecret, signedHeader(t, "15314x0618", docSignature), body, docNow, ErrStale},
		{"no signature", docSecret, signedHeader(t, docTimestamp, ""), body, docNow, ErrBadSignature},
		{"v1 signature", docSecret, signedHeader(t, docTimestamp, "v1="+docSignature[3:]), body, docNow, ErrBadSignature},
		{"non-hex signature", docSecret, signedHeader(t, docTimestamp, "v0=zz"+docSignature[5:]), body, docNow, ErrBadSignature},
		{"short signature", docSecret, signedHeader(t, docTimestamp, docSignature[:20]), body, docNow, ErrBadSignature},
		{"upper-case hex", docSecret, signedHeader(t, docTimestamp, "v0=A2114D57B48EAC39B9AD189DD8316235A7B4A8D21A10BD27519666489C69B503"), body, docNow, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Verify(tt.secret, tt.header, tt.body, tt.now)
			if tt.wantErr == nil {
				if err != nil {
					t.Fatalf("Verify: %v", err)
				}
				return
			}
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("Verify = %v, want %v", err, tt.wantErr)
			}
		})
	}
}

func TestVerify_FreshSignature(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	ts := strconv.FormatInt(now.Unix(), 10)
	body := []byte(`{"type":"url_verification","challenge":"c"}`)
	if err := Verify("s3cret", signedHeader(t, ts, Signature("s3cret", ts, body)), body, now); err != nil {
		t.Fatalf("Verify: %v", err)
	}
}
