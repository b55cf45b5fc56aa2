package memory

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"brain/internal/linediff"
	"brain/tools"
)

// snippetLines is how many lines around an edit its result shows.
const snippetLines = 4

func (t *tree) create(ctx context.Context, p, text string) (string, error) {
	w, err := t.file(p)
	if err != nil {
		return "", err
	}
	files, err := t.cfg.Store.Files(ctx, w.scope.Key)
	if err != nil {
		return "", err
	}
	for _, f := range files {
		switch {
		case f.Path == w.rel:
			return "", tools.Failed("Error: File %s already exists", w.path)
		case strings.HasPrefix(f.Path, w.rel+"/"):
			return "", tools.Failed("Error: %s is a directory; create a file inside it or pick another name", w.path)
		case strings.HasPrefix(w.rel, f.Path+"/"):
			return "", tools.Failed("Error: %s is a file, so %s cannot be inside it", display(w.scope, f.Path), w.path)
		}
	}
	text, note := t.scrub(text)
	err = t.commit(ctx, w.scope, Change{Command: "create", Path: w.path},
		Write{Path: w.rel, Content: text, Op: "create", Diff: linediff.Of("", text)})
	if errors.Is(err, ErrConflict) {
		return "", tools.Failed("Error: File %s already exists", w.path)
	}
	if err != nil {
		return "", err
	}
	return "File created successfully at: " + w.path + note, nil
}

func (t *tree) strReplace(ctx context.Context, p, oldStr, newStr string) (string, error) {
	w, f, err := t.existing(ctx, p, "Error: The path %s does not exist. Please provide a valid path.")
	if err != nil {
		return "", err
	}
	if oldStr == "" {
		return "", tools.Failed("Error: Parameter `old_str` is required for command: str_replace")
	}
	switch n := strings.Count(f.Content, oldStr); {
	case n == 0:
		return "", tools.Failed("No replacement was performed, old_str `%s` did not appear verbatim in %s.", oldStr, w.path)
	case n > 1:
		return "", tools.Failed("No replacement was performed. Multiple occurrences of old_str `%s` in lines: %s. Please ensure it is unique",
			oldStr, occurrenceLines(f.Content, oldStr))
	}
	newStr, note := t.scrub(newStr)
	at := strings.Index(f.Content, oldStr)
	content := f.Content[:at] + newStr + f.Content[at+len(oldStr):]
	if err := t.edit(ctx, w, f, content, "str_replace"); err != nil {
		return "", err
	}
	line := strings.Count(f.Content[:at], "\n")
	return "The memory file has been edited." + note + "\n" + snippet(content, line, strings.Count(newStr, "\n")+1), nil
}

func (t *tree) insert(ctx context.Context, p string, line int, text string) (string, error) {
	w, f, err := t.existing(ctx, p, "Error: The path %s does not exist")
	if err != nil {
		return "", err
	}
	lines := strings.Split(f.Content, "\n")
	if line < 0 || line > len(lines) {
		return "", tools.Failed("Error: Invalid `insert_line` parameter: %d. It should be within the range of lines of the file: [0, %d]", line, len(lines))
	}
	text, note := t.scrub(text)
	added := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	next := append(append(append([]string{}, lines[:line]...), added...), lines[line:]...)
	if err := t.edit(ctx, w, f, strings.Join(next, "\n"), "insert"); err != nil {
		return "", err
	}
	return "The file " + w.path + " has been edited." + note, nil
}

// existing parses p and reads its file; missing is the contract's text
// for a file that is not there.
func (t *tree) existing(ctx context.Context, p, missing string) (where, File, error) {
	w, err := t.file(p)
	if err != nil {
		return w, File{}, err
	}
	f, err := t.cfg.Store.File(ctx, w.scope.Key, w.rel)
	if errors.Is(err, ErrNotFound) {
		return w, f, tools.Failed(missing, w.path)
	}
	return w, f, err
}

// edit replaces f's content, if nobody changed f since it was read.
func (t *tree) edit(ctx context.Context, w where, f File, content, op string) error {
	err := t.commit(ctx, w.scope, Change{Command: op, Path: w.path},
		Write{Path: w.rel, Expect: f.Version, Content: content, Op: op, Diff: linediff.Of(f.Content, content)})
	if errors.Is(err, ErrConflict) {
		return tools.Failed("Error: %s was changed by another session after you read it (you read version %d); nothing was written. "+
			"View it again and retry your edit.", w.path, f.Version)
	}
	return err
}

func (t *tree) delete(ctx context.Context, p string) (string, error) {
	w, err := t.parse(p)
	if err != nil {
		return "", err
	}
	if w.scope == nil || w.rel == "" {
		return "", tools.Failed("Error: %s cannot be deleted; delete the files in it instead", w.path)
	}
	files, err := t.under(ctx, w)
	if err != nil {
		return "", err
	}
	if len(files) == 0 {
		return "", tools.Failed("Error: The path %s does not exist", w.path)
	}
	writes := make([]Write, len(files))
	for i, f := range files {
		writes[i] = Write{Path: f.Path, Expect: f.Version, Delete: true, Op: "delete", Diff: linediff.Of(f.Content, "")}
	}
	err = t.commit(ctx, w.scope, Change{Command: "delete", Path: w.path}, writes...)
	if errors.Is(err, ErrConflict) {
		return "", tools.Failed("Error: %s was changed by another session meanwhile; nothing was deleted. View it again and retry.", w.path)
	}
	if err != nil {
		return "", err
	}
	return "Successfully deleted " + w.path, nil
}

func (t *tree) rename(ctx context.Context, from, to string) (string, error) {
	src, err := t.parse(from)
	if err != nil {
		return "", err
	}
	dst, err := t.parse(to)
	if err != nil {
		return "", err
	}
	if src.scope == nil || src.rel == "" || dst.scope == nil || dst.rel == "" {
		return "", tools.Failed("Error: only files and directories inside a scope (e.g. %s/%s/...) can be renamed", Root, ScopeAgent)
	}
	if src.scope.Dir != dst.scope.Dir {
		return "", tools.Failed("Error: rename moves within one scope; to move %s to %s, create the new file and delete the old one", src.path, dst.path)
	}
	if dst.rel == src.rel || strings.HasPrefix(dst.rel, src.rel+"/") {
		return "", tools.Failed("Error: cannot move %s into itself", src.path)
	}
	moving, err := t.under(ctx, src)
	if err != nil {
		return "", err
	}
	if len(moving) == 0 {
		return "", tools.Failed("Error: The path %s does not exist", src.path)
	}
	taken, err := t.under(ctx, dst)
	if err != nil {
		return "", err
	}
	if len(taken) > 0 {
		return "", tools.Failed("Error: The destination %s already exists", dst.path)
	}
	var writes []Write
	for _, f := range moving {
		moved := dst.rel + strings.TrimPrefix(f.Path, src.rel)
		writes = append(writes,
			Write{Path: f.Path, Expect: f.Version, Delete: true, Op: "rename", Diff: "renamed to " + display(src.scope, moved)},
			Write{Path: moved, Content: f.Content, Op: "rename", Diff: "renamed from " + display(src.scope, f.Path)})
	}
	err = t.commit(ctx, src.scope, Change{Command: "rename", Path: src.path, NewPath: dst.path, Diff: "renamed " + src.path + " to " + dst.path}, writes...)
	if errors.Is(err, ErrConflict) {
		return "", tools.Failed("Error: %s or %s was changed by another session meanwhile; nothing was renamed. View them again and retry.", src.path, dst.path)
	}
	if err != nil {
		return "", err
	}
	return "Successfully renamed " + src.path + " to " + dst.path, nil
}

// under is the file w names, or every file in the directory w names.
func (t *tree) under(ctx context.Context, w where) ([]File, error) {
	files, err := t.cfg.Store.Files(ctx, w.scope.Key)
	if err != nil {
		return nil, err
	}
	var out []File
	for _, f := range files {
		if f.Path == w.rel || strings.HasPrefix(f.Path, w.rel+"/") {
			out = append(out, f)
		}
	}
	return out, nil
}

// commit stores the writes and records the change in the session.
func (t *tree) commit(ctx context.Context, s *Scope, ch Change, writes ...Write) error {
	err := t.cfg.Store.Commit(ctx, Commit{Scope: s.Key, By: t.where.By, SessionID: t.call.SessionID, Writes: writes, Limits: t.cfg.Limits})
	if errors.Is(err, ErrFull) {
		return tools.Failed("Error: %v; nothing was written. Delete or shorten files you no longer need, then retry.", err)
	}
	if err != nil {
		return err
	}
	if t.cfg.Changed == nil {
		return nil
	}
	ch.Scope = s.Key
	if ch.Diff == "" && len(writes) > 0 {
		var parts []string
		for _, w := range writes {
			parts = append(parts, w.Diff)
		}
		ch.Diff = linediff.Clip(strings.Join(parts, "\n"))
	}
	if len(writes) == 1 && !writes[0].Delete {
		ch.Version = writes[0].Expect + 1
	}
	if err := t.cfg.Changed(ctx, t.call.SessionID, ch); err != nil {
		return tools.Failed("the change to %s was saved, but recording it in this session failed: %v", ch.Path, err)
	}
	return nil
}

// scrub redacts secrets from text to store, and says so to the model.
func (t *tree) scrub(text string) (string, string) {
	out := t.cfg.Scrub.String(text)
	if out == text {
		return text, ""
	}
	return out, " (secrets in it were replaced with " + tools.Redacted + " before storing)"
}

// occurrenceLines lists the lines where sub starts, as "1, 4".
func occurrenceLines(content, sub string) string {
	var lines []string
	for from := 0; ; {
		i := strings.Index(content[from:], sub)
		if i < 0 {
			break
		}
		lines = append(lines, fmt.Sprint(strings.Count(content[:from+i], "\n")+1))
		from += i + 1
	}
	return strings.Join(lines, ", ")
}

// snippet is the lines around an edit at line (0-based) that spans n lines.
func snippet(content string, line, n int) string {
	lines := strings.Split(content, "\n")
	from := max(0, line-snippetLines)
	to := min(len(lines), line+n+snippetLines)
	return numbered(lines[from:to], from+1)
}
