package egress

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"brain/internal/gitmirror"
)

// mirrorSyncTimeout bounds bringing a mirror up to date: a first fetch of
// a large repository takes a while.
const mirrorSyncTimeout = 10 * time.Minute

// fromMirror answers a git request from the agent's mirror of the
// repository when there is a cache and the request carries a read token;
// it reports whether it answered. The first request of a clone or fetch
// (info/refs) updates the mirror from the git host; the pack request that
// follows is served from it. A repository over the cache's budget, or a
// mirror gone meanwhile, is fetched from the git host as without a cache.
func (x *Proxy) fromMirror(w http.ResponseWriter, r *http.Request, host, base string, call gitCall) bool {
	m := x.policy.Mirrors
	if m == nil {
		return false
	}
	if call.token == "" {
		if x.policy.Credentials == nil || !x.policy.Credentials.AllowedRepo(call.repo) {
			return false
		}
		// Ask git for its credentials now: the mirror is fetched with a
		// read token, and a public repository is served the same way.
		x.count(host, nil)
		w.Header().Set("WWW-Authenticate", `Basic realm="brain"`)
		http.Error(w, "authentication required", http.StatusUnauthorized)
		return true
	}
	dir, ok := m.Dir(host, call.repo)
	if !ok {
		return false
	}
	if call.service == "info/refs" {
		ctx, cancel := context.WithTimeout(r.Context(), mirrorSyncTimeout)
		defer cancel()
		url := strings.TrimSuffix(base, "/") + "/" + call.repo + ".git"
		err := m.Sync(ctx, host, call.repo, url, GrantUser, call.token)
		switch {
		case errors.Is(err, gitmirror.ErrTooLarge):
			return false
		case err != nil:
			x.count(host, nil)
			http.Error(w, "brain egress proxy: could not fetch "+call.repo+" from "+host+": "+x.scrub(err.Error(), call.token), http.StatusBadGateway)
			return true
		}
	} else if _, err := os.Stat(filepath.Join(dir, "HEAD")); err != nil {
		return false
	}
	x.count(host, nil)
	m.Serve(w, r, host, call.repo, call.service)
	return true
}

// scrub keeps a token out of a message the sandbox reads.
func (x *Proxy) scrub(msg, token string) string {
	if token == "" {
		return msg
	}
	return strings.ReplaceAll(msg, token, "[token]")
}
