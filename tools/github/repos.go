package github

import (
	"errors"
	"fmt"
	"net/url"
	"path"
	"regexp"
	"slices"
	"strings"

	"brain/tools"
)

var (
	ownerPattern = regexp.MustCompile(`^[A-Za-z0-9-]+$`)
	namePattern  = regexp.MustCompile(`^[A-Za-z0-9._-]+$`)
	globPattern  = regexp.MustCompile(`^[A-Za-z0-9._*?\[\]^-]+$`)
)

// repo is an allowed owner/name.
type repo struct{ owner, name string }

func (r repo) String() string { return r.owner + "/" + r.name }

// allowList is tools.github.repos: owner/name entries, the name a glob.
// The owner is literal so a search can be confined to it.
type allowList struct {
	entries []string // lower case, as configured
}

func newAllowList(entries []string) (allowList, error) {
	if len(entries) == 0 {
		return allowList{}, errors.New("repos: list at least one repository (owner/name; the name may be a glob such as acme/*)")
	}
	var a allowList
	for i, e := range entries {
		owner, name, ok := strings.Cut(e, "/")
		if !ok || !ownerPattern.MatchString(owner) || !globPattern.MatchString(name) {
			return allowList{}, fmt.Errorf("repos[%d]: %q: want owner/name, the owner literal, the name a name or a glob", i, e)
		}
		if _, err := path.Match(name, ""); err != nil {
			return allowList{}, fmt.Errorf("repos[%d]: %q: invalid glob", i, e)
		}
		a.entries = append(a.entries, strings.ToLower(e))
	}
	return a, nil
}

// allows reports whether owner/name is on the list (GitHub ignores case).
func (a allowList) allows(full string) bool {
	full = strings.ToLower(full)
	for _, e := range a.entries {
		if ok, _ := path.Match(e, full); ok {
			return true
		}
	}
	return false
}

// allowsOwner reports whether every repository of owner is on the list:
// only then may a search name the owner (org:, user:).
func (a allowList) allowsOwner(owner string) bool {
	return slices.Contains(a.entries, strings.ToLower(owner)+"/*")
}

// check parses the model's repo argument and refuses one off the list;
// both before anything is sent.
func (a allowList) check(tool, s string) (repo, error) {
	owner, name, ok := strings.Cut(strings.TrimSpace(s), "/")
	if !ok || !ownerPattern.MatchString(owner) || !namePattern.MatchString(name) || name == "." || name == ".." {
		return repo{}, tools.Failed("%s: repo %q is not owner/name; nothing was sent", tool, s)
	}
	if !a.allows(owner + "/" + name) {
		return repo{}, tools.Failed("%s: repository %s/%s is not in the allow-list (tools.github.repos: %s); nothing was sent",
			tool, owner, name, strings.Join(a.entries, ", "))
	}
	return repo{owner, name}, nil
}

// scopeQualifiers are the search qualifiers that choose repositories.
var scopeQualifiers = []string{"repo:", "org:", "user:"}

// confine returns the query with its search confined to the list. A
// query that names repositories itself keeps them, if each is allowed;
// otherwise every entry is added: repo:owner/name, or user:owner for
// owner/* (a partial glob is searched by owner and filtered after).
// GitHub joins scope qualifiers with OR, so one outside the list would
// widen the search: such a query is refused. Excluding (-repo:) only
// narrows and is kept.
func (a allowList) confine(tool, query string) (string, error) {
	query = strings.TrimSpace(query)
	if query == "" {
		return "", tools.Failed("%s: query is empty; nothing was sent", tool)
	}
	scoped := false
	for _, f := range strings.Fields(query) {
		if strings.HasPrefix(f, "-") {
			continue
		}
		lower := strings.ToLower(strings.TrimLeft(f, `"(`))
		for _, q := range scopeQualifiers {
			v, ok := strings.CutPrefix(lower, q)
			if !ok {
				continue
			}
			v = strings.TrimRight(v, `")`)
			allowed := a.allowsOwner(v)
			if q == "repo:" {
				allowed = a.allows(v)
			}
			if !allowed {
				return "", tools.Failed("%s: the query's %s reaches outside the allow-list (tools.github.repos: %s); nothing was sent",
					tool, f, strings.Join(a.entries, ", "))
			}
			scoped = true
		}
	}
	if scoped {
		return query, nil
	}
	var quals []string
	for _, e := range a.entries {
		owner, name, _ := strings.Cut(e, "/")
		q := "repo:" + e
		if strings.ContainsAny(name, "*?[") {
			q = "user:" + owner
		}
		if !slices.Contains(quals, q) {
			quals = append(quals, q)
		}
	}
	return query + " " + strings.Join(quals, " "), nil
}

// repoOfURL is owner/name from an API repository URL
// (https://api.github.com/repos/OWNER/NAME).
func repoOfURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return ""
	}
	parts := strings.Split(strings.Trim(u.Path, "/"), "/")
	if len(parts) < 2 {
		return ""
	}
	return parts[len(parts)-2] + "/" + parts[len(parts)-1]
}
