package bot

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// ghAppToken is the App's token in the configs of the acts_as tests.
const ghAppToken = "ghp_apptoken"

// ghUserComment is a comment the fake received, with who wrote it.
type ghUserComment struct{ as, body string }

// caller is who a request's bearer token belongs to: a person's login
// (a live user token), "app", or "?" for anything else.
func (g *ghOAuthFake) caller(r *http.Request) string {
	tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if tok == ghAppToken {
		return "app"
	}
	if login, ok := g.access[tok]; ok {
		return login
	}
	return "?"
}

func (g *ghOAuthFake) issueCall(w http.ResponseWriter, r *http.Request) (string, bool) {
	g.mu.Lock()
	who := g.caller(r)
	g.apiCalls = append(g.apiCalls, r.Method+" "+r.URL.Path+" as "+who)
	g.mu.Unlock()
	if who == "?" {
		w.WriteHeader(http.StatusUnauthorized)
		ghJSON(w, map[string]any{"message": "Bad credentials", "documentation_url": "https://docs.github.com/rest"})
		return "", false
	}
	return who, true
}

// getIssue answers issue 12 of acme/widgets, as GitHub's REST API shapes it.
func (g *ghOAuthFake) getIssue(w http.ResponseWriter, r *http.Request) {
	if _, ok := g.issueCall(w, r); !ok {
		return
	}
	g.mu.Lock()
	n := len(g.comments)
	g.mu.Unlock()
	ghJSON(w, map[string]any{"number": 12, "title": "Widgets wobble", "state": "open", "comments": n,
		"html_url": "https://github.com/acme/widgets/issues/12", "user": map[string]any{"login": "carol-gh"}})
}

func (g *ghOAuthFake) listComments(w http.ResponseWriter, r *http.Request) {
	if _, ok := g.issueCall(w, r); !ok {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	out := []map[string]any{}
	for i, c := range g.comments {
		out = append(out, map[string]any{"id": i + 1, "body": c.body, "user": map[string]any{"login": c.as}})
	}
	ghJSON(w, out)
}

func (g *ghOAuthFake) createComment(w http.ResponseWriter, r *http.Request) {
	who, ok := g.issueCall(w, r)
	if !ok {
		return
	}
	var in struct{ Body string }
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		w.WriteHeader(http.StatusUnprocessableEntity)
		ghJSON(w, map[string]any{"message": "Problems parsing JSON"})
		return
	}
	g.mu.Lock()
	g.comments = append(g.comments, ghUserComment{as: who, body: in.Body})
	id := len(g.comments)
	g.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusCreated)
	_ = json.NewEncoder(w).Encode(map[string]any{"id": id, "body": in.Body, "user": map[string]any{"login": who},
		"html_url": fmt.Sprintf("https://github.com/acme/widgets/issues/12#issuecomment-%d", id)})
}

// written returns the comments so far and the issue calls' log.
func (g *ghOAuthFake) written() ([]ghUserComment, []string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]ghUserComment(nil), g.comments...), append([]string(nil), g.apiCalls...)
}
