package contracts

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
)

// GitHubDescription is the file of @octokit/openapi that describes
// api.github.com (GitHub's own description, the one go-github's
// X-GitHub-Api-Version 2022-11-28 requests are answered by).
const GitHubDescription = "@octokit/openapi/generated/api.github.com.json"

// GitHubOperations are the REST operations brain calls, as the description
// spells their paths. The description is loaded pruned to these (and what
// they reference), which keeps loading its 13 MB under a second; a request
// to any other path of the description is reported as one brain is not
// known to make, and one to no path of it as no operation at all.
var GitHubOperations = []string{
	"POST /app/installations/{installation_id}/access_tokens",
	"GET /repos/{owner}/{repo}",
	"GET /repos/{owner}/{repo}/issues",
	"POST /repos/{owner}/{repo}/issues",
	"GET /repos/{owner}/{repo}/issues/{issue_number}",
	"PATCH /repos/{owner}/{repo}/issues/{issue_number}",
	"GET /repos/{owner}/{repo}/issues/{issue_number}/comments",
	"POST /repos/{owner}/{repo}/issues/{issue_number}/comments",
	"POST /repos/{owner}/{repo}/issues/{issue_number}/labels",
	"GET /search/issues",
	"GET /search/code",
	"GET /repos/{owner}/{repo}/pulls",
	"POST /repos/{owner}/{repo}/pulls",
	"GET /repos/{owner}/{repo}/pulls/{pull_number}",
	"GET /repos/{owner}/{repo}/pulls/{pull_number}/files",
	"GET /repos/{owner}/{repo}/pulls/{pull_number}/reviews",
	"GET /repos/{owner}/{repo}/compare/{basehead}",
	"GET /repos/{owner}/{repo}/commits",
	"GET /repos/{owner}/{repo}/commits/{ref}/check-runs",
	"GET /repos/{owner}/{repo}/commits/{ref}/status",
	"GET /repos/{owner}/{repo}/contents/{path}",
	// GitHub conversations (bot/githubbridge).
	"PATCH /repos/{owner}/{repo}/issues/comments/{comment_id}",
	"POST /repos/{owner}/{repo}/issues/comments/{comment_id}/reactions",
	"POST /repos/{owner}/{repo}/issues/{issue_number}/reactions",
	"POST /repos/{owner}/{repo}/pulls/comments/{comment_id}/reactions",
	"GET /repos/{owner}/{repo}/collaborators/{username}/permission",
	"GET /rate_limit",
}

// GitHub validates requests to, and responses from, GitHub's REST API
// against its published OpenAPI description.
type GitHub struct {
	doc   *openapi3.T
	paths []githubPath // every path of the full description
}

// exampleRepairs are laid on the description's examples that break their
// own operation's schema (TestGitHub_ExamplesMatchSchemas lists them), so
// the fakes can still answer with them.
var exampleRepairs = map[string]any{
	// The example of repos/get lacks language, here and in its source and
	// parent repositories.
	"GET /repos/{owner}/{repo}": map[string]any{"language": nil, "source": map[string]any{"language": nil}, "parent": map[string]any{"language": nil}},
	// The pull request examples' requested_teams lack the required type.
	"GET /repos/{owner}/{repo}/pulls":               []any{map[string]any{"requested_teams": []any{}}},
	"POST /repos/{owner}/{repo}/pulls":              map[string]any{"requested_teams": []any{}},
	"GET /repos/{owner}/{repo}/pulls/{pull_number}": map[string]any{"requested_teams": []any{}},
	// The collaborator permission example's user lacks role_name.
	"GET /repos/{owner}/{repo}/collaborators/{username}/permission": map[string]any{"user": map[string]any{"role_name": "write"}},
}

type githubPath struct {
	template string
	re       *regexp.Regexp
	names    []string
	literal  int // characters outside parameters: the more, the more specific
	methods  []string
}

var (
	githubOnce sync.Once
	githubAPI  *GitHub
	githubErr  error
)

// LoadGitHub returns the description, parsed once per test binary.
func LoadGitHub(t testing.TB) *GitHub {
	t.Helper()
	modules := Require(t)
	githubOnce.Do(func() {
		githubAPI, githubErr = loadGitHub(filepath.Join(modules, GitHubDescription))
	})
	if githubErr != nil {
		t.Fatal(githubErr)
	}
	return githubAPI
}

func loadGitHub(file string) (*GitHub, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("contracts: github: %w", err)
	}
	var full struct {
		OpenAPI    string                                `json:"openapi"`
		Info       json.RawMessage                       `json:"info"`
		Paths      map[string]map[string]json.RawMessage `json:"paths"`
		Components map[string]map[string]json.RawMessage `json:"components"`
	}
	if err := json.Unmarshal(data, &full); err != nil {
		return nil, fmt.Errorf("contracts: github: %w", err)
	}
	g := &GitHub{}
	for template, item := range full.Paths {
		p := githubPath{template: template}
		expr := "^"
		for _, part := range regexp.MustCompile(`\{[^}]+\}|[^{]+`).FindAllString(template, -1) {
			if name, ok := strings.CutPrefix(part, "{"); ok {
				name = strings.TrimSuffix(name, "}")
				p.names = append(p.names, name)
				// A ref, path or base...head may hold slashes, which
				// go-github sends as they are.
				if name == "path" || name == "ref" || name == "basehead" {
					expr += "(.+)"
				} else {
					expr += "([^/]+)"
				}
				continue
			}
			p.literal += len(part)
			expr += regexp.QuoteMeta(part)
		}
		p.re = regexp.MustCompile(expr + "$")
		for m := range item {
			if m != "parameters" {
				p.methods = append(p.methods, strings.ToUpper(m))
			}
		}
		g.paths = append(g.paths, p)
	}
	sort.Slice(g.paths, func(i, j int) bool { return g.paths[i].literal > g.paths[j].literal })

	// The pruned description: brain's operations and the components they
	// reach.
	pruned := map[string]any{"openapi": full.OpenAPI, "info": full.Info}
	paths := map[string]map[string]json.RawMessage{}
	var pending []string
	for _, op := range GitHubOperations {
		method, template, _ := strings.Cut(op, " ")
		raw, ok := full.Paths[template][strings.ToLower(method)]
		if !ok {
			return nil, fmt.Errorf("contracts: github: the description has no %s", op)
		}
		if paths[template] == nil {
			paths[template] = map[string]json.RawMessage{}
			if params, ok := full.Paths[template]["parameters"]; ok {
				paths[template]["parameters"] = params
				pending = append(pending, refs(params)...)
			}
		}
		paths[template][strings.ToLower(method)] = raw
		pending = append(pending, refs(raw)...)
	}
	components := map[string]map[string]json.RawMessage{}
	for len(pending) > 0 {
		ref := pending[len(pending)-1]
		pending = pending[:len(pending)-1]
		kind, name, ok := strings.Cut(strings.TrimPrefix(ref, "#/components/"), "/")
		if !ok {
			return nil, fmt.Errorf("contracts: github: unexpected reference %q", ref)
		}
		if _, seen := components[kind][name]; seen {
			continue
		}
		raw, ok := full.Components[kind][name]
		if !ok {
			return nil, fmt.Errorf("contracts: github: dangling reference %q", ref)
		}
		if components[kind] == nil {
			components[kind] = map[string]json.RawMessage{}
		}
		components[kind][name] = raw
		pending = append(pending, refs(raw)...)
	}
	pruned["paths"], pruned["components"] = paths, components
	data, err = json.Marshal(pruned)
	if err != nil {
		return nil, fmt.Errorf("contracts: github: %w", err)
	}
	loader := openapi3.NewLoader()
	g.doc, err = loader.LoadFromData(data)
	if err != nil {
		return nil, fmt.Errorf("contracts: github: %w", err)
	}
	return g, nil
}

var refPattern = regexp.MustCompile(`"\$ref":\s*"(#/components/[^"]+)"`)

func refs(raw []byte) []string {
	var out []string
	for _, m := range refPattern.FindAllSubmatch(raw, -1) {
		out = append(out, string(m[1]))
	}
	return out
}

// Operation names a request's operation ("POST
// /repos/{owner}/{repo}/issues (issues/create)").
type Operation struct {
	route  *routers.Route
	params map[string]string
}

func (o Operation) String() string {
	if o.route == nil {
		return "no operation"
	}
	return fmt.Sprintf("%s %s (%s)", o.route.Method, o.route.Path, o.route.Operation.OperationID)
}

// CheckRequest finds r's operation and validates r against it: path and
// query parameters, the headers the operation defines and the JSON body,
// where a field the operation's schema does not define counts as wrong
// (GitHub ignores it silently, so it is a misspelling or a misreading).
// r's body is left readable.
func (g *GitHub) CheckRequest(r *http.Request) (Operation, error) {
	path := r.URL.EscapedPath()
	var found *githubPath
	var values []string
	// The most specific path that defines the method, one of brain's
	// operations first: /compare/{basehead} and /compare/{base}...{head}
	// both match a comparison.
	rank := func(p *githubPath) int {
		switch {
		case g.doc.Paths.Value(p.template) != nil && g.doc.Paths.Value(p.template).GetOperation(r.Method) != nil:
			return 3
		case slices.Contains(p.methods, r.Method):
			return 2
		}
		return 1
	}
	best := 0
	for i := range g.paths {
		if m := g.paths[i].re.FindStringSubmatch(path); m != nil {
			if n := rank(&g.paths[i]); n > best {
				found, values, best = &g.paths[i], m[1:], n
			}
		}
	}
	if found == nil {
		return Operation{}, fmt.Errorf("%s %s is no operation of GitHub's REST API", r.Method, path)
	}
	item := g.doc.Paths.Value(found.template)
	var op *openapi3.Operation
	if item != nil {
		op = item.GetOperation(r.Method)
	}
	if op == nil {
		if !slices.Contains(found.methods, r.Method) {
			return Operation{}, fmt.Errorf("%s %s: GitHub's REST API defines no %s on %s", r.Method, path, r.Method, found.template)
		}
		return Operation{}, fmt.Errorf("%s %s is not among the operations brain is known to call: add it to contracts.GitHubOperations", r.Method, found.template)
	}
	params := map[string]string{}
	for i, name := range found.names {
		v, err := url.PathUnescape(values[i])
		if err != nil {
			v = values[i]
		}
		params[name] = v
	}
	o := Operation{route: &routers.Route{Spec: g.doc, Path: found.template, PathItem: item, Method: r.Method, Operation: op}, params: params}

	var body []byte
	if r.Body != nil {
		var err error
		body, err = io.ReadAll(r.Body)
		if err != nil {
			return o, fmt.Errorf("%s: reading the body: %w", o, err)
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
	}
	in := &openapi3filter.RequestValidationInput{
		Request: r, PathParams: params, Route: o.route,
		Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc, MultiError: true},
	}
	err := openapi3filter.ValidateRequest(context.Background(), in)
	r.Body = io.NopCloser(bytes.NewReader(body))
	if err != nil {
		return o, fmt.Errorf("%s: %s", o, brief(err))
	}
	for key := range r.URL.Query() {
		if op.Parameters.GetByInAndName("query", key) == nil && item.Parameters.GetByInAndName("query", key) == nil {
			return o, fmt.Errorf("%s: query parameter %q is not defined", o, key)
		}
	}
	if len(bytes.TrimSpace(body)) > 0 && op.RequestBody != nil && op.RequestBody.Value != nil {
		if mt := op.RequestBody.Value.Content.Get("application/json"); mt != nil && mt.Schema != nil {
			var v any
			if err := json.Unmarshal(body, &v); err != nil {
				return o, fmt.Errorf("%s: body: %w", o, err)
			}
			if field := unknownField(mt.Schema.Value, v, "body"); field != "" {
				return o, fmt.Errorf("%s: %s is not a field the operation defines", o, field)
			}
		}
	}
	return o, nil
}

// unknownField returns the path of the first property of v that schema s
// (where v matches it) does not define, or "".
func unknownField(s *openapi3.Schema, v any, at string) string {
	if s == nil {
		return ""
	}
	if len(s.OneOf) > 0 || len(s.AnyOf) > 0 {
		// The branch v matches decides; the validator has checked one does.
		for _, branch := range append(slices.Clone(s.OneOf), s.AnyOf...) {
			if branch.Value != nil && branch.Value.VisitJSON(v) == nil {
				return unknownField(branch.Value, v, at)
			}
		}
		return ""
	}
	switch v := v.(type) {
	case map[string]any:
		if len(s.AllOf) > 0 {
			return ""
		}
		if s.AdditionalProperties.Has != nil && *s.AdditionalProperties.Has || s.AdditionalProperties.Schema != nil || len(s.Properties) == 0 {
			return ""
		}
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			prop, ok := s.Properties[k]
			if !ok {
				return at + "." + k
			}
			if f := unknownField(prop.Value, v[k], at+"."+k); f != "" {
				return f
			}
		}
	case []any:
		if s.Items != nil {
			for i, item := range v {
				if f := unknownField(s.Items.Value, item, fmt.Sprintf("%s[%d]", at, i)); f != "" {
					return f
				}
			}
		}
	}
	return ""
}

// CheckResponse validates a response to a request of operation o: its
// status is one the operation defines and its JSON body matches that
// status's schema.
func (g *GitHub) CheckResponse(r *http.Request, o Operation, status int, header http.Header, body []byte) error {
	if o.route == nil {
		return nil
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: r, PathParams: o.params, Route: o.route},
		Status:                 status,
		Header:                 header,
		Body:                   io.NopCloser(bytes.NewReader(body)),
		Options:                &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true},
	}
	if err := openapi3filter.ValidateResponse(context.Background(), in); err != nil {
		return fmt.Errorf("%s: response %d: %s", o, status, brief(err))
	}
	return nil
}
