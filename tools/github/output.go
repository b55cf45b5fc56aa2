package github

import (
	"bytes"
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"brain/tools"
)

// Per-field bounds, in characters, before the result's own cap: a list
// shows excerpts, a single item more.
const (
	maxBody    = 8000
	maxComment = 2000
	maxExcerpt = 300
)

// minCut is the shortest text cut: shorter ones would not get shorter
// with the ellipsis added.
const minCut = 8

// marker matches a decision marker of this family in a body; results show
// bodies without it (it is bookkeeping, not content).
var markerText = regexp.MustCompile(`\s*<!-- brain:decision=[^\s>]* -->`)

// text is a body as results show it: without markers, cut to n characters.
// cut reports whether it was cut.
func text(s string, n int, cut *bool) string {
	s = markerText.ReplaceAllString(s, "")
	out := clip(s, n)
	if out != s && cut != nil {
		*cut = true
	}
	return out
}

// clip cuts s to at most n characters, marking the cut with an ellipsis.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// stamp formats a GitHub time; the zero time is empty.
func stamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

// fit encodes v (which must encode as an object) as compact JSON of at
// most max bytes, secrets scrubbed first so a cut never leaves half of
// one. A result too large is cut where it is largest: a list loses its
// last items (lists are ordered most relevant first), a text its end; it
// is then marked "truncated": true.
func fit(v any, max int, scrub *tools.Scrubber) (json.RawMessage, error) {
	b, err := tools.MarshalUnescaped(v)
	if err != nil {
		return nil, err
	}
	b = scrub.JSON(b)
	if len(b) <= max {
		return b, nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil {
		return nil, errors.New("the result is not a JSON object")
	}
	doc["truncated"] = true
	for {
		b, err := tools.MarshalUnescaped(doc)
		if err != nil {
			return nil, err
		}
		if len(b) <= max {
			return b, nil
		}
		if !cut(doc, len(b)-max) {
			return nil, tools.Failed("the result does not fit in %d bytes", max)
		}
	}
}

// cut shortens the largest list or text in doc by about excess bytes and
// reports whether anything could be cut.
func cut(doc any, excess int) bool {
	var best struct {
		size   int
		list   *[]any
		parent func(any) // sets the text's new value
		text   string
	}
	var walk func(v any, set func(any))
	walk = func(v any, set func(any)) {
		switch v := v.(type) {
		case string:
			if n := len(v); n > best.size && n > minCut {
				best.size, best.list, best.parent, best.text = n, nil, set, v
			}
		case []any:
			if b, _ := tools.MarshalUnescaped(v); len(b) > best.size && len(v) > 0 {
				l := v
				best.size, best.list, best.parent = len(b), &l, set
			}
			for i := range v {
				walk(v[i], func(nv any) { v[i] = nv })
			}
		case map[string]any:
			for k, item := range v {
				if k == "truncated" {
					continue
				}
				walk(item, func(nv any) { v[k] = nv })
			}
		}
	}
	walk(doc, nil)
	switch {
	case best.list != nil:
		l := *best.list
		n := len(l)
		for removed := 0; n > 0 && removed < excess; {
			b, _ := tools.MarshalUnescaped(l[n-1])
			removed += len(b) + 1
			n--
		}
		best.parent(l[:n])
		return true
	case best.parent != nil:
		keep := max(len(best.text)-excess-len("…"), 0)
		for keep > 0 && !utf8.RuneStart(best.text[keep]) {
			keep--
		}
		best.parent(strings.TrimRightFunc(best.text[:keep], func(r rune) bool { return r == utf8.RuneError }) + "…")
		return true
	}
	return false
}
