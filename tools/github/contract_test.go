package github

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	gh "github.com/google/go-github/v62/github"
)

// The canaries: requests GitHub's description does not define must be
// refused by the fake, naming the operation and the field, or a validator
// that passes everything would pass the suite.
func TestContract_WrongRequestsRefused(t *testing.T) {
	f := newFakeGitHub(t)
	f.seed("acme/widgets", fakeIssue{number: 7, title: "Paper jam"})
	cases := []struct {
		name, method, path, body string
		want                     []string // in the violation
	}{
		{"misspelt field", "POST", "repos/acme/widgets/issues", `{"titel":"x","title":"x"}`,
			[]string{"POST /repos/{owner}/{repo}/issues (issues/create)", "body.titel"}},
		{"wrong type", "PATCH", "repos/acme/widgets/issues/7", `{"state":"shut"}`,
			[]string{"issues/update", "state"}},
		{"wrong query parameter type", "GET", "repos/acme/widgets/issues?per_page=many", "",
			[]string{"issues/list-for-repo", "per_page"}},
		{"unknown query parameter", "GET", "repos/acme/widgets/issues?label=bug", "",
			[]string{"issues/list-for-repo", `"label"`}},
		{"no such operation", "GET", "repos/acme/widgets/issue/7", "",
			[]string{"no operation of GitHub's REST API"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var body io.Reader
			if c.body != "" {
				body = strings.NewReader(c.body)
			}
			req, _ := http.NewRequest(c.method, f.url()+c.path, body)
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			got := f.contractViolations()
			if resp.StatusCode != http.StatusBadRequest || len(got) != 1 {
				t.Fatalf("status %d, violations %q", resp.StatusCode, got)
			}
			for _, w := range c.want {
				if !strings.Contains(got[0], w) {
					t.Errorf("violation %q lacks %q", got[0], w)
				}
			}
		})
	}

	// go-github v62's own AddLabelsToIssue, which brain used to call, sends
	// a bare array: the description defines {"labels": [...]}.
	t.Run("bare label array", func(t *testing.T) {
		api := gh.NewClient(nil)
		api.BaseURL, _ = url.Parse(f.url())
		_, _, err := api.Issues.AddLabelsToIssue(context.Background(), "acme", "widgets", 7, []string{"bug"})
		got := f.contractViolations()
		if err == nil || len(got) != 1 || !strings.Contains(got[0], "issues/add-labels") {
			t.Fatalf("err %v, violations %q", err, got)
		}
	})
}

// An answer of the fake's that the description's schema rejects is
// reported too.
func TestContract_WrongAnswerReported(t *testing.T) {
	f := newFakeGitHub(t)
	f.seed("acme/widgets", fakeIssue{number: 7, title: "Paper jam", state: "closed", reason: "fixed"}) // no such state_reason
	resp, err := http.Get(f.url() + "repos/acme/widgets/issues/7")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	got := f.contractViolations()
	if len(got) != 1 || !strings.Contains(got[0], "fake's answer: GET /repos/{owner}/{repo}/issues/{issue_number} (issues/get)") || !strings.Contains(got[0], "state_reason") {
		t.Fatalf("violations %q", got)
	}
}
