package slackhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// MaxSkew is how far a request's timestamp may be from now, either way.
const MaxSkew = 5 * time.Minute

// Signing headers.
const (
	HeaderTimestamp = "X-Slack-Request-Timestamp"
	HeaderSignature = "X-Slack-Signature"
)

// Verify errors; Verify wraps one of them with a detail.
var (
	// ErrBadSignature: the signature header is missing, garbled or wrong,
	// or no signing secret is configured.
	ErrBadSignature = errors.New("bad slack signature")
	// ErrStale: the timestamp header is missing, garbled or more than
	// MaxSkew away from now (a replay, or a badly wrong clock).
	ErrStale = errors.New("stale slack request")
)

// Verify checks Slack's v0 request signature over the raw body:
// hex(HMAC-SHA256(secret, "v0:" + timestamp + ":" + body)) with a "v0="
// prefix, compared in constant time, and rejects timestamps more than
// MaxSkew from now. Headers are read with http.Header.Get, so keys must be
// canonical (as net/http delivers them).
func Verify(secret string, h http.Header, body []byte, now time.Time) error {
	if secret == "" {
		return fmt.Errorf("%w: no signing secret configured", ErrBadSignature)
	}
	ts := h.Get(HeaderTimestamp)
	if !allDigits(ts) {
		return fmt.Errorf("%w: missing or garbled %s", ErrStale, HeaderTimestamp)
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return fmt.Errorf("%w: garbled %s", ErrStale, HeaderTimestamp)
	}
	if skew := now.Unix() - sec; skew > int64(MaxSkew/time.Second) || skew < -int64(MaxSkew/time.Second) {
		return fmt.Errorf("%w: timestamp %d is %ds from now", ErrStale, sec, skew)
	}
	hexSig, ok := strings.CutPrefix(h.Get(HeaderSignature), "v0=")
	if !ok {
		return fmt.Errorf("%w: missing or unversioned %s", ErrBadSignature, HeaderSignature)
	}
	got, err := hex.DecodeString(hexSig)
	if err != nil || len(got) != sha256.Size {
		return fmt.Errorf("%w: garbled %s", ErrBadSignature, HeaderSignature)
	}
	if !hmac.Equal(got, mac(secret, ts, body)) {
		return fmt.Errorf("%w: mismatch", ErrBadSignature)
	}
	return nil
}

// Signature returns the X-Slack-Signature value Slack would send for a
// request: "v0=" + hex MAC. Tests and fake Slack servers sign with it.
func Signature(secret, timestamp string, body []byte) string {
	return "v0=" + hex.EncodeToString(mac(secret, timestamp, body))
}

// mac is the raw v0 HMAC-SHA256 of a request.
func mac(secret, timestamp string, body []byte) []byte {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte("v0:"))
	m.Write([]byte(timestamp))
	m.Write([]byte{':'})
	m.Write(body)
	return m.Sum(nil)
}

// allDigits reports whether s is 1 to 12 ASCII digits: no sign, no spaces,
// nothing that would make the signed string differ from the parsed number.
func allDigits(s string) bool {
	if s == "" || len(s) > 12 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
