package api

import (
	"context"
	"math"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"brain/bot/config"
	"brain/engine"
	"brain/internal/keyguard"
	"brain/tools"
)

// NewKeyGuard is the guard of the configured keys, for the API and the
// console to share; now is the clock (nil: time.Now).
func NewKeyGuard(keys []config.APIKey, now func() time.Time) *keyguard.Guard {
	gk := make([]keyguard.Key, len(keys))
	for i, k := range keys {
		gk[i] = keyguard.Key{Name: k.Name, Secret: k.Key, ActFor: k.ActFor}
	}
	return keyguard.New(gk, now)
}

// caller is the key holder a request authenticated as. Requests served
// without keys (loopback, no proxy) carry none.
type caller = keyguard.Caller

// auth guards /v1 and /metrics. With keys it requires one of them, and
// throttles client addresses that send wrong ones (internal/keyguard,
// shared with the console's key sign-in). Without,
// it serves only callers on the loopback interface whose request no proxy
// relayed, so a reverse proxy on the same host cannot open the API to the
// network by accident.
func (a *Server) auth(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if a.keys.Empty() {
			if err := localCaller(r); err != nil {
				writeError(w, r, a.log, err)
				return
			}
			next(w, r)
			return
		}
		token, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if token == r.Header.Get("Authorization") {
			token = "" // no bearer scheme: no key
		}
		c, wait, ok := a.keys.Check(r.RemoteAddr, token)
		if wait > 0 {
			secs := int(math.Ceil(wait.Seconds()))
			w.Header().Set("Retry-After", strconv.Itoa(secs))
			writeError(w, r, a.log, engine.Errorf(engine.CodeOverloaded, "too many wrong API keys from this address; try again in %d s", secs))
			return
		}
		if !ok {
			w.Header().Set("WWW-Authenticate", `Bearer realm="brain"`)
			writeError(w, r, a.log, engine.Errorf(engine.CodeUnauthorized, "a valid bearer API key is required (Authorization: Bearer KEY)"))
			return
		}
		if a.audit != nil && r.Method != http.MethodGet && r.Method != http.MethodHead {
			if err := a.audit.Record(r.Context(), "key:"+c.Name, actionKeyUsed, r.Method+" "+r.URL.Path, nil); err != nil {
				writeError(w, r, a.log, err)
				return
			}
		}
		next(w, r.WithContext(context.WithValue(r.Context(), callerKey, c)))
	}
}

// actionKeyUsed is the audit action of an API key's write (bot/audit's
// ActionAPIKeyUsed).
const actionKeyUsed = "api_key.used"

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

// decider is who a session start, decision or retry is recorded as: by, and the key the
// caller authenticated with (empty without keys). A key holder decides as
// the key's name; only a key with act_for may name someone else, and the
// decision keeps which key did, so one key is one vote whoever it names.
// Without keys the caller is on this host and by is taken as given.
func (a *Server) decider(r *http.Request, by, does string) (who, key string, err error) {
	who, err = a.actingAs(r, by, does)
	if c, ok := r.Context().Value(callerKey).(caller); ok {
		key = c.Name
	}
	return who, key, err
}

// actingAs is the person a key holder acts as when the body names one
// (started_by, by): the key's name, or with act_for anyone, logged with
// the key. A key without act_for naming someone else is refused, so no
// caller picks the identity forbid_self and votes are checked against.
func (a *Server) actingAs(r *http.Request, named, does string) (string, error) {
	c, ok := r.Context().Value(callerKey).(caller)
	switch {
	case !ok:
		return named, nil
	case named == "" || named == c.Name:
		return c.Name, nil
	case c.ActFor:
		a.log.Info("api key acts for another", tools.LogRequestID, requestID(r.Context()), tools.LogPath, r.URL.Path, tools.LogAPIKey, c.Name, tools.LogBy, named)
		return named, nil
	}
	return "", engine.Errorf(engine.CodeForbidden, "the API key %s %s as %q, not %q; give it act_for: true to act for others", c.Name, does, c.Name, named)
}
