package github

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	gh "github.com/google/go-github/v62/github"

	"brain/tools"
)

// maxFileBytes is the largest file github_get_file reads: GitHub's
// contents API returns content only up to 1 MiB.
const maxFileBytes = 1 << 20

func (c *client) getFile(ctx context.Context, call tools.Call) (json.RawMessage, error) {
	const tool = "github_get_file"
	var in struct {
		Repo string `json:"repo"`
		Path string `json:"path"`
		Ref  string `json:"ref"`
	}
	if err := parseInput(tool, call.Input, &in); err != nil {
		return nil, err
	}
	r, err := c.repos.check(tool, in.Repo)
	if err != nil {
		return nil, err
	}
	p := strings.Trim(in.Path, "/")
	if p == "" || strings.Contains(p, "..") {
		return nil, tools.Failed("%s: path %q is empty or holds \"..\"; nothing was sent", tool, in.Path)
	}
	op := fmt.Sprintf("read %s in %s", p, r)
	var file *gh.RepositoryContent
	var dir []*gh.RepositoryContent
	err = c.call(ctx, op, func(ctx context.Context) (resp *gh.Response, err error) {
		file, dir, resp, err = c.api.Repositories.GetContents(ctx, r.owner, r.name, p, &gh.RepositoryContentGetOptions{Ref: in.Ref})
		return resp, err
	})
	if err != nil {
		return nil, err
	}
	if file == nil {
		names := make([]string, 0, len(dir))
		for _, e := range dir {
			n := e.GetName()
			if e.GetType() == "dir" {
				n += "/"
			}
			names = append(names, n)
		}
		return nil, tools.Failed("%s: %s is a directory, not a file; it holds: %s", op, p, clip(strings.Join(names, ", "), maxComment))
	}
	if file.GetType() != "file" {
		return nil, tools.Failed("%s: %s is a %s, not a file", op, p, file.GetType())
	}
	if file.GetSize() > maxFileBytes || file.GetEncoding() == "none" {
		return nil, tools.Failed("%s: the file is %d bytes, over the %d-byte limit of this tool", op, file.GetSize(), maxFileBytes)
	}
	content, err := file.GetContent()
	if err != nil {
		return nil, tools.Failed("%s: GitHub's answer holds no readable content: %v", op, err)
	}
	head := []byte(content[:min(len(content), 8000)])
	if bytes.IndexByte(head, 0) >= 0 || !utf8.ValidString(content) {
		return nil, tools.Failed("%s: %s is a binary file (%d bytes); only text files can be read", op, p, file.GetSize())
	}
	out := struct {
		Repo      string `json:"repo"`
		Path      string `json:"path"`
		Ref       string `json:"ref,omitempty"`
		SHA       string `json:"sha"`
		Size      int    `json:"size"`
		URL       string `json:"url,omitempty"`
		Content   string `json:"content"`
		Truncated bool   `json:"truncated,omitempty"`
	}{Repo: r.String(), Path: file.GetPath(), Ref: in.Ref, SHA: file.GetSHA(), Size: file.GetSize(), URL: file.GetHTMLURL(), Content: content}
	return c.result(out)
}

func (c *client) searchCode(ctx context.Context, call tools.Call) (json.RawMessage, error) {
	const tool = "github_search_code"
	var in struct {
		Query string `json:"query"`
		Limit int    `json:"limit"`
	}
	if err := parseInput(tool, call.Input, &in); err != nil {
		return nil, err
	}
	q, err := c.repos.confine(tool, in.Query)
	if err != nil {
		return nil, err
	}
	var res *gh.CodeSearchResult
	err = c.call(ctx, "search code", func(ctx context.Context) (resp *gh.Response, err error) {
		res, resp, err = c.api.Search.Code(ctx, q, &gh.SearchOptions{TextMatch: true, ListOptions: gh.ListOptions{PerPage: limitOf(in.Limit)}})
		return resp, err
	})
	if err != nil {
		return nil, err
	}
	type itemOut struct {
		Repo      string   `json:"repo"`
		Path      string   `json:"path"`
		URL       string   `json:"url,omitempty"`
		Fragments []string `json:"fragments,omitempty"`
	}
	out := struct {
		Query      string    `json:"query"`
		TotalCount int       `json:"total_count"`
		Incomplete bool      `json:"incomplete_results,omitempty"`
		Items      []itemOut `json:"items"`
		Dropped    int       `json:"dropped_outside_allow_list,omitempty"`
		Truncated  bool      `json:"truncated,omitempty"`
	}{Query: q, TotalCount: res.GetTotal(), Incomplete: res.GetIncompleteResults(), Items: []itemOut{}}
	for _, it := range res.CodeResults {
		full := it.GetRepository().GetFullName()
		if !c.repos.allows(full) {
			out.Dropped++
			continue
		}
		item := itemOut{Repo: full, Path: it.GetPath(), URL: it.GetHTMLURL()}
		for _, m := range it.TextMatches {
			item.Fragments = append(item.Fragments, text(m.GetFragment(), maxExcerpt, &out.Truncated))
		}
		out.Items = append(out.Items, item)
	}
	return c.result(out)
}

func (c *client) listCommits(ctx context.Context, call tools.Call) (json.RawMessage, error) {
	const tool = "github_list_commits"
	var in struct {
		Repo  string `json:"repo"`
		Path  string `json:"path"`
		Since string `json:"since"`
		Ref   string `json:"ref"`
		Limit int    `json:"limit"`
	}
	if err := parseInput(tool, call.Input, &in); err != nil {
		return nil, err
	}
	r, err := c.repos.check(tool, in.Repo)
	if err != nil {
		return nil, err
	}
	opts := &gh.CommitsListOptions{SHA: in.Ref, Path: in.Path, ListOptions: gh.ListOptions{PerPage: limitOf(in.Limit)}}
	if in.Since != "" {
		if opts.Since, err = time.Parse(time.RFC3339, in.Since); err != nil {
			return nil, tools.Failed("%s: since %q is not an RFC 3339 time such as 2026-01-31T00:00:00Z; nothing was sent", tool, in.Since)
		}
	}
	var commits []*gh.RepositoryCommit
	err = c.call(ctx, "list the commits of "+r.String(), func(ctx context.Context) (resp *gh.Response, err error) {
		commits, resp, err = c.api.Repositories.ListCommits(ctx, r.owner, r.name, opts)
		return resp, err
	})
	if err != nil {
		return nil, err
	}
	type commitOut struct {
		SHA     string `json:"sha"`
		Author  string `json:"author,omitempty"`
		Date    string `json:"date,omitempty"`
		Message string `json:"message"`
		URL     string `json:"url,omitempty"`
	}
	out := struct {
		Repo      string      `json:"repo"`
		Path      string      `json:"path,omitempty"`
		Items     []commitOut `json:"items"`
		Truncated bool        `json:"truncated,omitempty"`
	}{Repo: r.String(), Path: in.Path, Items: []commitOut{}}
	for _, cm := range commits {
		author := cm.GetAuthor().GetLogin()
		if author == "" {
			author = cm.GetCommit().GetAuthor().GetName()
		}
		out.Items = append(out.Items, commitOut{
			SHA: cm.GetSHA(), Author: author, Date: stamp(cm.GetCommit().GetAuthor().GetDate().Time),
			Message: text(cm.GetCommit().GetMessage(), maxExcerpt, &out.Truncated), URL: cm.GetHTMLURL(),
		})
	}
	return c.result(out)
}
