package gitrepo

import (
	"context"
	"fmt"
	"strconv"
	"strings"
)

// Resolve returns the commit id a revision names in the snapshot ("HEAD",
// a branch, an id).
func (s *Snapshot) Resolve(ctx context.Context, rev string) (string, error) {
	if strings.HasPrefix(rev, "-") {
		return "", fmt.Errorf("revision %q: must not start with '-'", rev)
	}
	out, err := s.git(ctx, nil, "rev-parse", "--verify", "--quiet", "--end-of-options", rev+"^{commit}")
	if err != nil {
		return "", fmt.Errorf("%s is not a commit of the repository", rev)
	}
	return strings.TrimSpace(string(out)), nil
}

// HasCommit reports whether the snapshot holds commit id.
func (s *Snapshot) HasCommit(ctx context.Context, id string) bool {
	if !IsCommitID(id) {
		return false
	}
	_, err := s.git(ctx, nil, "cat-file", "-e", id+"^{commit}")
	return err == nil
}

// MergeBase is the best common ancestor of a and b.
func (s *Snapshot) MergeBase(ctx context.Context, a, b string) (string, error) {
	out, err := s.git(ctx, nil, "merge-base", "--end-of-options", a, b)
	if err != nil {
		return "", fmt.Errorf("%s and %s share no history", short(a), short(b))
	}
	return strings.TrimSpace(string(out)), nil
}

// Commit is one commit of a change.
type Commit struct {
	ID      string `json:"id"`
	Subject string `json:"subject"`
}

// Commits lists the commits reachable from head and not from base, oldest
// first, at most limit (and reports how many there are).
func (s *Snapshot) Commits(ctx context.Context, base, head string, limit int) ([]Commit, int, error) {
	out, err := s.git(ctx, nil, "rev-list", "--reverse", "--format=%H %s", "--no-commit-header", "--end-of-options", head, "^"+base)
	if err != nil {
		// git before 2.33 has no --no-commit-header: read its headers.
		out, err = s.git(ctx, nil, "log", "--reverse", "--format=%H %s", "--end-of-options", head, "^"+base)
		if err != nil {
			return nil, 0, err
		}
	}
	var list []Commit
	n := 0
	for line := range strings.Lines(string(out)) {
		id, subject, _ := strings.Cut(strings.TrimRight(line, "\n"), " ")
		if !IsCommitID(id) {
			continue
		}
		n++
		if len(list) < limit {
			list = append(list, Commit{ID: id, Subject: subject})
		}
	}
	return list, n, nil
}

// FileChange is one file of a diff.
type FileChange struct {
	Path       string `json:"path"`
	Insertions int    `json:"insertions"` // -1 for a binary file
	Deletions  int    `json:"deletions"`
	// Patch is the file's part of the unified diff.
	Patch string `json:"-"`
}

// Diff is what head changes against base: each file with its counts and
// patch, and the whole unified diff. Diff drivers and text conversions
// are off: what is shown is the bytes that change.
func (s *Snapshot) Diff(ctx context.Context, base, head string) ([]FileChange, string, error) {
	args := []string{"diff", "--no-color", "--no-ext-diff", "--no-textconv", "--no-renames", "--end-of-options", base, head}
	num, err := s.git(ctx, nil, append([]string{args[0], "--numstat", "-z"}, args[1:]...)...)
	if err != nil {
		return nil, "", err
	}
	var files []FileChange
	for rec := range strings.SplitSeq(strings.TrimSuffix(string(num), "\x00"), "\x00") {
		if rec == "" {
			continue
		}
		parts := strings.SplitN(rec, "\t", 3)
		if len(parts) != 3 {
			continue
		}
		f := FileChange{Path: parts[2], Insertions: -1, Deletions: -1}
		if parts[0] != "-" {
			f.Insertions, _ = strconv.Atoi(parts[0])
			f.Deletions, _ = strconv.Atoi(parts[1])
		}
		files = append(files, f)
	}
	patch, err := s.git(ctx, nil, args...)
	if err != nil {
		return nil, "", err
	}
	byPath := splitPatch(patch)
	for i := range files {
		files[i].Patch = byPath[files[i].Path]
	}
	return files, string(patch), nil
}

// splitPatch cuts a unified diff into each file's part, keyed by the new
// path (the old one for a deletion).
func splitPatch(patch []byte) map[string]string {
	out := map[string]string{}
	var blocks []string
	for line := range strings.Lines(string(patch)) {
		if strings.HasPrefix(line, "diff --git ") || len(blocks) == 0 {
			blocks = append(blocks, "")
		}
		blocks[len(blocks)-1] += line
	}
	for _, b := range blocks {
		var plus, minus, header string
		for line := range strings.Lines(b) {
			switch {
			case strings.HasPrefix(line, "diff --git "):
				if _, after, ok := strings.Cut(strings.TrimRight(line, "\n"), " b/"); ok {
					header = after
				}
			case strings.HasPrefix(line, "+++ ") && plus == "":
				plus = pathOf(strings.TrimPrefix(line, "+++ "), "b/")
			case strings.HasPrefix(line, "--- ") && minus == "":
				minus = pathOf(strings.TrimPrefix(line, "--- "), "a/")
			}
		}
		switch {
		case plus != "":
			out[plus] = b
		case minus != "":
			out[minus] = b
		case header != "":
			out[header] = b // a binary file: no ---/+++ lines
		}
	}
	return out
}

func pathOf(s, prefix string) string {
	s = strings.TrimRight(s, "\n")
	if s == "/dev/null" {
		return ""
	}
	if uq, err := strconv.Unquote(s); err == nil && strings.HasPrefix(s, `"`) {
		s = uq
	}
	return strings.TrimPrefix(s, prefix)
}

// Pack is a pack of the objects reachable from head and not from any of
// haves (commits the receiver has; those the snapshot lacks are left out).
func (s *Snapshot) Pack(ctx context.Context, head string, haves []string) ([]byte, error) {
	var in strings.Builder
	in.WriteString(head + "\n")
	for _, h := range haves {
		if s.HasCommit(ctx, h) {
			in.WriteString("^" + h + "\n")
		}
	}
	return s.git(ctx, strings.NewReader(in.String()), "pack-objects", "--stdout", "--revs", "-q")
}

func short(id string) string { return id[:min(len(id), 12)] }
