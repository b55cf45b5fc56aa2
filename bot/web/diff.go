package web

import "strings"

// diffLine is one line of a change's text on the approval page, with the
// class that colours it: file headers, hunk headers, added and removed
// lines; anything else (a summary, context lines) has none. The template
// escapes the text, so a patch adding "<script>" shows it as text.
type diffLine struct {
	Class, Text string
}

// diffLines splits a card's detail into classed lines.
func diffLines(detail string) []diffLine {
	var out []diffLine
	for line := range strings.Lines(detail) {
		line = strings.TrimRight(line, "\n")
		class := ""
		switch {
		case strings.HasPrefix(line, "diff --git "), strings.HasPrefix(line, "+++ "), strings.HasPrefix(line, "--- "):
			class = "file"
		case strings.HasPrefix(line, "@@"):
			class = "hunk"
		case strings.HasPrefix(line, "+"):
			class = "add"
		case strings.HasPrefix(line, "-"):
			class = "del"
		}
		out = append(out, diffLine{Class: class, Text: line})
	}
	return out
}
