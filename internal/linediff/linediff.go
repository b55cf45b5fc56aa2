// Package linediff is the one line diff brain records of a changed text
// (the memory tool's memory.changed, an operator's edit of a memory
// file): the region that changed, as "-" and "+" lines. It is a leaf.
package linediff

import (
	"strings"
)

// Max bounds a diff.
const Max = 4096

// Of is a line diff of one edit: the lines before and after the region
// that changed, each line prefixed "-" or "+". Commands change one region
// of a file, so trimming the common lines at both ends finds it.
func Of(before, after string) string {
	if before == after {
		return ""
	}
	a, b := splitLines(before), splitLines(after)
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	var out []string
	for _, l := range a[pre : len(a)-suf] {
		out = append(out, "-"+l)
	}
	for _, l := range b[pre : len(b)-suf] {
		out = append(out, "+"+l)
	}
	return Clip(strings.Join(out, "\n"))
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// Clip bounds a diff at Max bytes, on a character boundary.
func Clip(d string) string {
	if len(d) <= Max {
		return d
	}
	cut := Max
	for cut > 0 && d[cut]&0xC0 == 0x80 {
		cut--
	}
	return d[:cut] + "\n… (diff cut at " + "4 KiB)"
}
