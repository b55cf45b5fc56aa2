package web

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"strings"
	"time"
)

// A Slack sign-in between its start and its callback lives in the
// browser, not in brain: the state cookie holds the state, the nonce and
// where to go next, with an expiry, signed with HMAC-SHA256 under a key
// made when the console starts. A flood of starts therefore stores
// nothing and evicts nobody's sign-in; a forged or altered cookie fails
// the MAC, checked in constant time; and as the cookie is this browser's,
// a callback from another browser finds no state to match.

// maxNext bounds the destination a sign-in carries in its cookie.
const maxNext = 1024

// pendingSignIn is a Slack sign-in between its start and its callback.
type pendingSignIn struct {
	State   string `json:"s"`
	Nonce   string `json:"n"`
	Next    string `json:"x"`
	Expires int64  `json:"e"` // Unix seconds
}

// stateSigner seals and opens pending sign-ins.
type stateSigner struct{ key []byte }

func newStateSigner() stateSigner {
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	return stateSigner{key: key}
}

func (s stateSigner) mac(payload string) []byte {
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte(payload))
	return m.Sum(nil)
}

// seal is the cookie value for p: payload "." MAC, both base64url.
func (s stateSigner) seal(p pendingSignIn) string {
	if len(p.Next) > maxNext {
		p.Next = "/"
	}
	raw, _ := json.Marshal(p) // cannot fail: strings and an int
	payload := base64.RawURLEncoding.EncodeToString(raw)
	return payload + "." + base64.RawURLEncoding.EncodeToString(s.mac(payload))
}

// open returns the sign-in sealed in v, if its MAC holds and it has not
// expired at now.
func (s stateSigner) open(v string, now time.Time) (pendingSignIn, bool) {
	payload, sig, ok := strings.Cut(v, ".")
	if !ok {
		return pendingSignIn{}, false
	}
	got, err := base64.RawURLEncoding.DecodeString(sig)
	if err != nil || !hmac.Equal(got, s.mac(payload)) {
		return pendingSignIn{}, false
	}
	raw, err := base64.RawURLEncoding.DecodeString(payload)
	if err != nil {
		return pendingSignIn{}, false
	}
	var p pendingSignIn
	if json.Unmarshal(raw, &p) != nil || p.State == "" || !now.Before(time.Unix(p.Expires, 0)) {
		return pendingSignIn{}, false
	}
	return p, true
}
