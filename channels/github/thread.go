// Package github renders brain's sessions as GitHub issue and pull request
// comments (a reply comment per turn edited as it grows, questions as
// numbered lists, approval cards with /approve and /deny commands) over
// the go-github v62 client, and owns the GitHub thread type. It declares
// the small interfaces it needs of the engine and never imports bot.
package github

import (
	"fmt"
	"strconv"
	"strings"
)

// Thread is a GitHub conversation: an issue or a pull request.
type Thread struct {
	Owner, Repo string
	Number      int
}

const keyPrefix = "github:"

// Key is the thread key brain stores: "github:owner/repo#number".
func (t Thread) Key() string { return keyPrefix + t.String() }

// String is "owner/repo#number", as GitHub writes a reference.
func (t Thread) String() string { return fmt.Sprintf("%s/%s#%d", t.Owner, t.Repo, t.Number) }

// URL is the conversation on github.com (an issue URL; GitHub redirects
// it to a pull request's).
func (t Thread) URL() string {
	return fmt.Sprintf("https://github.com/%s/%s/issues/%d", t.Owner, t.Repo, t.Number)
}

// Parse reads a Key (or "owner/repo#number").
func Parse(key string) (Thread, error) {
	s := strings.TrimPrefix(key, keyPrefix)
	repo, num, ok := strings.Cut(s, "#")
	owner, name, ok2 := strings.Cut(repo, "/")
	n, err := strconv.Atoi(num)
	if !ok || !ok2 || err != nil || n <= 0 || owner == "" || name == "" || strings.ContainsAny(name, "/# ") || strings.ContainsAny(owner, "# ") {
		return Thread{}, fmt.Errorf("github thread %q: want owner/repo#number", key)
	}
	return Thread{Owner: owner, Repo: name, Number: n}, nil
}
