package bot

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestConnectVerify_GitHubLoginMustBeThePersons: a GitHub connect link
// made for Alice (linked to GitHub login alice-gh), finished by Mallory
// signed in to GitHub as mallory-gh, is refused after the code exchange:
// the page says why and nothing is stored. Alice's own finish connects.
func TestConnectVerify_GitHubLoginMustBeThePersons(t *testing.T) {
	ta, g, _ := ghUserApp(t)
	ta.must(http.StatusOK, "POST", "/v1/people", map[string]any{"id": "alice"}, nil)
	ta.must(http.StatusOK, "POST", "/v1/people/alice/identities", map[string]string{"surface": "github", "external_id": "Alice-GH"}, nil)
	finish := func(login string) (int, string) {
		var link struct{ URL string }
		ta.must(http.StatusOK, "POST", "/v1/connections/connect", map[string]string{"provider": "github", "person": "alice"}, &link)
		browser := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		resp, err := browser.Get(link.URL + "&login=" + url.QueryEscape(login))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		back, err := resp.Location()
		if err != nil {
			t.Fatal(err)
		}
		code, _, body := ta.do("GET", "/oauth/callback?"+back.RawQuery, nil)
		return code, string(body)
	}
	var list struct {
		Connections []struct{ Status string } `json:"connections"`
	}
	code, body := finish("mallory-gh")
	if code != http.StatusForbidden || !strings.Contains(body, "GitHub account @mallory-gh") || !strings.Contains(body, "nothing was stored") {
		t.Fatalf("Mallory's finish: %d %s", code, body)
	}
	ta.must(http.StatusOK, "GET", "/v1/connections?person=alice", nil, &list)
	if len(list.Connections) != 0 {
		t.Fatalf("after Mallory's finish Alice has %+v", list.Connections)
	}
	if strings.Contains(ta.logs.String(), "ghu_") {
		t.Fatal("Mallory's token reached the log")
	}
	if _, calls := g.counts(); strings.Join(calls, ",") != "mallory-gh" {
		t.Fatalf("GET /user answered for %v, want the one check of Mallory's token", calls)
	}
	if code, body := finish("alice-gh"); code != http.StatusOK || !strings.Contains(body, "Connected github") {
		t.Fatalf("Alice's finish: %d %s", code, body)
	}
	ta.must(http.StatusOK, "GET", "/v1/connections?person=alice", nil, &list)
	if len(list.Connections) != 1 || list.Connections[0].Status != "connected" {
		t.Fatalf("Alice's connections %+v", list.Connections)
	}
}
