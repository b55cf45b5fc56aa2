package contracts

import (
	"encoding/json"
	"sort"
	"strconv"
	"strings"
)

// exampleBorrowed names, for an operation whose example breaks its schema
// beyond repair, an operation answering with the same schema whose
// example does not.
var exampleBorrowed = map[string]string{
	// issues/get's example lacks assignee, closed_at and more.
	"GET /repos/{owner}/{repo}/issues/{issue_number}": "POST /repos/{owner}/{repo}/issues 201",
}

// Examples returns the operation's example answers for status as the
// description gives them ("default" first, then by name), repaired where
// they break their own schema (exampleRepairs, exampleBorrowed) and
// without the fields the fakes decide (exampleDropped).
func (g *GitHub) Examples(operation string, status int) []any {
	if other, ok := exampleBorrowed[operation]; ok && status == 200 {
		cut := strings.LastIndex(other, " ")
		n, _ := strconv.Atoi(other[cut+1:])
		return g.Examples(other[:cut], n)
	}
	method, template, _ := strings.Cut(operation, " ")
	item := g.doc.Paths.Value(template)
	if item == nil || item.GetOperation(method) == nil {
		return nil
	}
	resp := item.GetOperation(method).Responses.Status(status)
	if resp == nil || resp.Value == nil {
		return nil
	}
	mt := resp.Value.Content.Get("application/json")
	if mt == nil {
		return nil
	}
	var raw []any
	if mt.Example != nil {
		raw = append(raw, mt.Example)
	}
	names := make([]string, 0, len(mt.Examples))
	for name := range mt.Examples {
		names = append(names, name)
	}
	sort.Slice(names, func(i, j int) bool { return names[i] == "default" || names[j] != "default" && names[i] < names[j] })
	for _, name := range names {
		if ex := mt.Examples[name]; ex != nil && ex.Value != nil {
			raw = append(raw, ex.Value.Value)
		}
	}
	var out []any
	for _, v := range raw {
		// A deep copy: the description's own values stay untouched.
		data, err := json.Marshal(v)
		if err != nil || json.Unmarshal(data, &v) != nil {
			continue
		}
		if repair, ok := exampleRepairs[operation]; ok {
			v = Overlay(v, repair)
		}
		out = append(out, drop(v))
	}
	return out
}

// exampleDropped are fields taken out of the examples because their
// presence means something the fakes decide: the issue examples are pull
// requests (pull_request set), while whether an issue is one is the
// fake's to say. Only issues (objects with a repository_url) lose it.
var exampleDropped = []string{"pull_request"}

func drop(v any) any {
	switch v := v.(type) {
	case map[string]any:
		if _, issue := v["repository_url"]; issue {
			for _, k := range exampleDropped {
				delete(v, k)
			}
		}
		for k, e := range v {
			v[k] = drop(e)
		}
	case []any:
		for i, e := range v {
			v[i] = drop(e)
		}
	}
	return v
}

// brief returns err's message without the schemas and values kin-openapi
// dumps after each error: the field and the rule are what a reader needs.
func brief(err error) string {
	var out []string
	skip := -1 // the indentation of the dump being skipped
	for _, line := range strings.Split(err.Error(), "\n") {
		text := strings.TrimLeft(line, " ")
		indent := len(line) - len(text)
		if skip >= 0 {
			if text == "" || indent > skip || text == "Value:" || text == "Schema:" {
				continue
			}
			skip = -1
		}
		if text == "Schema:" || text == "Value:" {
			skip = indent
			continue
		}
		if text != "" {
			out = append(out, text)
		}
	}
	return strings.Join(out, "; ")
}

// Overlay returns base with over laid on it: objects merge key by key,
// each element of an array in over is laid on base's first element, and
// anything else in over replaces base. The fakes lay their own data on the
// description's examples, so that what they answer is complete.
func Overlay(base, over any) any {
	switch o := over.(type) {
	case map[string]any:
		b, ok := base.(map[string]any)
		if !ok {
			return over
		}
		out := make(map[string]any, len(b)+len(o))
		for k, v := range b {
			out[k] = v
		}
		for k, v := range o {
			out[k] = Overlay(b[k], v)
		}
		return out
	case []any:
		b, ok := base.([]any)
		if !ok || len(b) == 0 {
			return over
		}
		out := make([]any, len(o))
		for i, v := range o {
			out[i] = Overlay(b[0], v)
		}
		return out
	}
	return over
}
