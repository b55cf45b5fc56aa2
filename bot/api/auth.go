package api

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"net/netip"
	"strings"

	"brain/bot/config"
	"brain/engine"
)

// caller is the key holder a request authenticated as. Requests served
// without keys (loopback, no proxy) carry none.
type caller struct {
	name   string
	actFor bool
}

// auth guards /v1 and /metrics. With keys it requires one of them. Without,
// it serves only callers on the loopback interface whose request no proxy
// relayed, so a reverse proxy on the same host cannot open the API to the
// network by accident.
func (a *Server) auth(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if a.keys.empty() {
			if err := localCaller(r); err != nil {
				writeError(w, r, a.log, err)
				return
			}
			next(w, r)
			return
		}
		c, ok := a.keys.find(r.Header.Get("Authorization"))
		if !ok {
			w.Header().Set("WWW-Authenticate", `Bearer realm="brain"`)
			writeError(w, r, a.log, engine.Errorf(engine.CodeUnauthorized, "a valid bearer API key is required (Authorization: Bearer KEY)"))
			return
		}
		next(w, r.WithContext(context.WithValue(r.Context(), callerKey, c)))
	}
}

// forwardedHeaders are what reverse proxies add to name the client they
// relay; any of them means the loopback peer is not the caller.
var forwardedHeaders = []string{"Forwarded", "X-Forwarded-For", "X-Real-IP"}

// localCaller refuses a request that did not come straight from this host.
func localCaller(r *http.Request) error {
	peer, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil || !peer.Addr().Unmap().IsLoopback() {
		return engine.Errorf(engine.CodeForbidden, "without api_keys brain answers %s only to callers on this host; configure api_keys to let others in", r.URL.Path)
	}
	for _, h := range forwardedHeaders {
		if len(r.Header.Values(h)) > 0 {
			return engine.Errorf(engine.CodeForbidden, "without api_keys brain answers %s only to callers on this host, not to requests a proxy forwarded (%s); configure api_keys to let others in", r.URL.Path, h)
		}
	}
	return nil
}

// decider is the "by" recorded for a decision or retry. A key holder
// decides as the key's name; only a key with act_for may name someone
// else, and the log keeps which key did. Without keys the caller is on
// this host and by is taken as given.
func (a *Server) decider(r *http.Request, by string) (string, error) {
	c, ok := r.Context().Value(callerKey).(caller)
	switch {
	case !ok:
		return by, nil
	case by == "" || by == c.name:
		return c.name, nil
	case c.actFor:
		a.log.Info("api key acts for another", logRequestID, requestID(r.Context()), logPath, r.URL.Path, logKey, c.name, logBy, by)
		return by, nil
	}
	return "", engine.Errorf(engine.CodeForbidden, "the API key %s decides as %q, not %q; give it act_for: true to decide for others", c.name, c.name, by)
}

// keyring checks bearer keys in constant time. Keys are compared by their
// SHA-256 so neither length nor content leaks through timing; every key
// is compared, whichever matches.
type keyring struct {
	hashes  [][32]byte
	callers []caller
}

func newKeyring(keys []config.APIKey) keyring {
	var k keyring
	for _, key := range keys {
		k.hashes = append(k.hashes, sha256.Sum256([]byte(key.Key)))
		k.callers = append(k.callers, caller{name: key.Name, actFor: key.ActFor})
	}
	return k
}

func (k keyring) empty() bool { return len(k.hashes) == 0 }

func (k keyring) find(header string) (caller, bool) {
	token, ok := strings.CutPrefix(header, "Bearer ")
	if !ok || token == "" {
		return caller{}, false
	}
	h := sha256.Sum256([]byte(token))
	found := -1
	for i, want := range k.hashes {
		if subtle.ConstantTimeCompare(h[:], want[:]) == 1 {
			found = i
		}
	}
	if found < 0 {
		return caller{}, false
	}
	return k.callers[found], true
}
