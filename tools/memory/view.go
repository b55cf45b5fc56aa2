package memory

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"brain/tools"
)

// maxLines is the contract's bound on a file view.
const maxLines = 999_999

// tree runs one call's command.
type tree struct {
	cfg   Config
	call  tools.Call
	where Where
}

func (t *tree) view(ctx context.Context, p string, rng []int) (string, error) {
	w, err := t.parse(p)
	if err != nil {
		return "", err
	}
	if w.scope != nil && w.rel != "" {
		f, err := t.cfg.Store.File(ctx, w.scope.Key, w.rel)
		if err == nil {
			return viewFile(w.path, f.Content, rng)
		}
		if !errors.Is(err, ErrNotFound) {
			return "", err
		}
	}
	if len(rng) > 0 {
		return "", tools.Failed("Error: The `view_range` parameter is not allowed when `path` points to a directory.")
	}
	entries, err := t.list(ctx, w)
	if err != nil {
		return "", err
	}
	if entries == nil {
		return "", tools.Failed("The path %s does not exist. Please provide a valid path.", p)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Here're the files and directories up to 2 levels deep in %s, excluding hidden items and node_modules:\n", w.path)
	for _, e := range entries {
		fmt.Fprintf(&b, "%s\t%s\n", humanSize(e.size), e.path)
	}
	return b.String(), nil
}

type entry struct {
	path string
	size int64
}

// list is the directory w and what lies up to two levels below it, with
// sizes (a directory's is its files'); nil when w is no directory.
func (t *tree) list(ctx context.Context, w where) ([]entry, error) {
	var scopes []*Scope
	if w.scope == nil {
		for i := range t.where.Scopes {
			scopes = append(scopes, &t.where.Scopes[i])
		}
	} else {
		scopes = []*Scope{w.scope}
	}
	sizes := map[string]int64{w.path: 0}
	found := w.scope == nil || w.rel == ""
	for _, s := range scopes {
		files, err := t.cfg.Store.Files(ctx, s.Key)
		if err != nil {
			return nil, err
		}
		sizes[display(s, "")] += 0
		for _, f := range files {
			full := display(s, f.Path)
			if !strings.HasPrefix(full, w.path+"/") {
				continue
			}
			found = true
			// Every directory between w and the file, and the file, up to
			// two levels below w; hidden ones and what is in them left out.
			rest := strings.Split(strings.TrimPrefix(full, w.path+"/"), "/")
			at := w.path
			sizes[w.path] += int64(len(f.Content))
			for i, seg := range rest {
				if strings.HasPrefix(seg, ".") || seg == "node_modules" || i >= 2 {
					break
				}
				at += "/" + seg
				sizes[at] += int64(len(f.Content))
			}
		}
	}
	if !found {
		return nil, nil
	}
	out := make([]entry, 0, len(sizes))
	for p, n := range sizes {
		if p == w.path || strings.HasPrefix(p, w.path+"/") {
			out = append(out, entry{p, n})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].path < out[j].path })
	return out, nil
}

// humanSize is a size as du -h writes it.
func humanSize(n int64) string {
	switch {
	case n < 1024:
		return fmt.Sprintf("%d", n)
	case n < 1024*1024:
		return fmt.Sprintf("%.1fK", float64(n)/1024)
	default:
		return fmt.Sprintf("%.1fM", float64(n)/(1024*1024))
	}
}

// viewFile is a file with line numbers, whole or the lines of rng.
func viewFile(p, content string, rng []int) (string, error) {
	lines := strings.Split(content, "\n")
	if len(lines) > maxLines {
		return "", tools.Failed("File %s exceeds maximum line limit of 999,999 lines.", p)
	}
	first, last := 1, len(lines)
	if len(rng) == 2 {
		first, last = rng[0], rng[1]
		if last == -1 {
			last = len(lines)
		}
		if first < 1 || first > len(lines) || last < first || last > len(lines) {
			return "", tools.Failed("Error: Invalid `view_range`: %v. It should be within the range of lines of the file: [1, %d]", rng, len(lines))
		}
	}
	return fmt.Sprintf("Here's the content of %s with line numbers:\n%s", p, numbered(lines[first-1:last], first)), nil
}

// numbered is lines as cat -n writes them, the first numbered from.
func numbered(lines []string, from int) string {
	var b strings.Builder
	for i, l := range lines {
		fmt.Fprintf(&b, "%6d\t%s\n", from+i, l)
	}
	return b.String()
}
