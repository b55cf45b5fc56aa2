package httptool_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"

	"brain/tools"
	"brain/tools/httptool"
	"brain/tools/toolstest"
)

// tokens is a Bearer over a token per person, which a refresh replaces.
type tokens struct {
	mu      sync.Mutex
	current map[string]string
	next    map[string]string // what a refresh hands out
	asked   []string          // stale values the Bearer was called with
}

func (tk *tokens) bearer(_ context.Context, call tools.Call, stale string) (string, error) {
	tk.mu.Lock()
	defer tk.mu.Unlock()
	tk.asked = append(tk.asked, stale)
	who := call.Requester.ExternalID
	tok, ok := tk.current[who]
	if !ok {
		return "", &tools.ConnectionRequired{Tool: "create_ticket", Provider: "http:create_ticket", Identity: call.Requester}
	}
	if stale != "" && stale == tok {
		next, ok := tk.next[who]
		if !ok {
			return "", errors.New("refresh refused for token " + stale)
		}
		tk.current[who] = next
		tok = next
	}
	return tok, nil
}

// api answers 401 unless the bearer is one of valid, echoing the token
// otherwise (an API that echoes credentials must not leak them).
func api(valid ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		auth := r.Header.Get("Authorization")
		for _, v := range valid {
			if auth == "Bearer "+v {
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write([]byte(`{"ok":true,"seen":"` + auth + `"}`))
				return
			}
		}
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(`{"error":"invalid_token","token":"` + auth + `"}`))
	}
}

func oauthSpec(url string, b httptool.Bearer) httptool.Spec {
	spec := ticketSpec(url)
	spec.Headers = map[string]string{"X-Team": "support"}
	spec.Bearer = b
	return spec
}

func as(who, input string) tools.Call {
	c := call(input)
	c.Requester = tools.Identity{Surface: "slack", ExternalID: who}
	return c
}

func TestBearer_SendsTheCallersToken(t *testing.T) {
	tk := &tokens{current: map[string]string{"alice": "alice-token-000111", "bob": "bob-token-000222"}}
	tg := toolstest.NewRecorder(t, api("alice-token-000111", "bob-token-000222"))
	tool := compile(t, oauthSpec(tg.URL, tk.bearer), nil)
	out, err := tool.Run(context.Background(), as("alice", `{"title":"x"}`))
	if err != nil {
		t.Fatal(err)
	}
	if r := tg.Only(t); r.Header.Get("Authorization") != "Bearer alice-token-000111" || r.Header.Get("X-Team") != "support" {
		t.Fatalf("headers %v", r.Header)
	}
	if strings.Contains(string(out), "alice-token") || !strings.Contains(string(out), tools.Redacted) {
		t.Fatalf("the echoed token is not scrubbed from the result: %s", out)
	}
	// Nobody connected: nothing is sent, and the bot layer gets the
	// ConnectionRequired to send a link.
	_, err = tool.Run(context.Background(), as("carol", `{}`))
	if cr, ok := tools.AsConnectionRequired(err); !ok || cr.Identity.ExternalID != "carol" {
		t.Fatalf("err = %v, want ConnectionRequired for carol", err)
	}
	if n := len(tg.Requests()); n != 1 {
		t.Fatalf("the service got %d requests, want 1 (carol's must not be sent)", n)
	}
}

func TestBearer_RefreshOnceOn401(t *testing.T) {
	tk := &tokens{current: map[string]string{"alice": "old-token-aaaaaa"}, next: map[string]string{"alice": "new-token-bbbbbb"}}
	tg := toolstest.NewRecorder(t, api("new-token-bbbbbb"))
	tool := compile(t, oauthSpec(tg.URL, tk.bearer), nil)
	out, err := tool.Run(context.Background(), as("alice", `{"title":"x"}`))
	if err != nil {
		t.Fatal(err)
	}
	reqs := tg.Requests()
	if len(reqs) != 2 || reqs[0].Header.Get("Authorization") != "Bearer old-token-aaaaaa" ||
		reqs[1].Header.Get("Authorization") != "Bearer new-token-bbbbbb" || reqs[1].Header.Get("Idempotency-Key") != reqs[0].Header.Get("Idempotency-Key") {
		t.Fatalf("requests %+v: want the stale token, then the fresh one with the same key", reqs)
	}
	if strings.Contains(string(out), "new-token") {
		t.Fatalf("result leaks the token: %s", out)
	}
	if strings.Join(tk.asked, ",") != ",old-token-aaaaaa" {
		t.Fatalf("bearer asked with %q", tk.asked)
	}

	// A fresh token refused as well: one retry only, and the error (which
	// quotes the service's body) carries neither token.
	tk2 := &tokens{current: map[string]string{"alice": "old-token-cccccc"}, next: map[string]string{"alice": "new-token-dddddd"}}
	tg2 := toolstest.NewRecorder(t, api())
	tool2 := compile(t, oauthSpec(tg2.URL, tk2.bearer), nil)
	_, err = tool2.Run(context.Background(), as("alice", `{}`))
	te := toolError(t, err, false)
	if !strings.Contains(te.Message, "HTTP 401") || strings.Contains(te.Message, "token-cccccc") || strings.Contains(te.Message, "token-dddddd") {
		t.Fatalf("message %q", te.Message)
	}
	if n := len(tg2.Requests()); n != 2 {
		t.Fatalf("the service got %d requests, want 2 (one retry)", n)
	}

	// The refresh refused: the service refused the request, and the
	// error does not echo the token.
	tk3 := &tokens{current: map[string]string{"alice": "old-token-eeeeee"}}
	tg3 := toolstest.NewRecorder(t, api())
	tool3 := compile(t, oauthSpec(tg3.URL, tk3.bearer), nil)
	_, err = tool3.Run(context.Background(), as("alice", `{}`))
	te = toolError(t, err, false)
	if !strings.Contains(te.Message, "refused the request") || strings.Contains(te.Message, "token-eeeeee") {
		t.Fatalf("message %q", te.Message)
	}
	if n := len(tg3.Requests()); n != 1 {
		t.Fatalf("the service got %d requests, want 1", n)
	}
}

func TestBearer_ApplyUsesTheApprover(t *testing.T) {
	tg := toolstest.NewRecorder(t, api("bob-token-000222"))
	spec := oauthSpec(tg.URL, func(_ context.Context, call tools.Call, _ string) (string, error) {
		if call.Actor(tools.ActsAsApprover).ExternalID == "bob" {
			return "bob-token-000222", nil
		}
		return "alice-token-000111", nil
	})
	spec.Approval = &httptool.Approval{Title: "Create"}
	tool := compile(t, spec, nil)
	c := as("alice", `{}`)
	c.Approver = tools.Identity{Surface: "slack", ExternalID: "bob"}
	if _, err := tool.Apply(context.Background(), c, tools.Decision{ID: "apr-1"}); err != nil {
		t.Fatal(err)
	}
	if got := tg.Only(t).Header.Get("Authorization"); got != "Bearer bob-token-000222" {
		t.Fatalf("Authorization %q, want bob's", got)
	}
}

func TestBearer_NoAuthorizationHeader(t *testing.T) {
	spec := ticketSpec("https://api.example.com/x")
	spec.Bearer = func(context.Context, tools.Call, string) (string, error) { return "t", nil }
	if _, err := httptool.New(spec, nil); err == nil || !strings.Contains(err.Error(), "Authorization") {
		t.Fatalf("New with both a Bearer and an Authorization header = %v", err)
	}
}
