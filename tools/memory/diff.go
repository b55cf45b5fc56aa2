package memory

import (
	"strings"
)

// MaxDiff bounds the diff recorded for one change.
const MaxDiff = 4096

// diff is a line diff of one edit: the lines before and after the region
// that changed, each line prefixed "-" or "+". Commands change one region
// of a file, so trimming the common lines at both ends finds it.
func diff(before, after string) string {
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
	return clipDiff(strings.Join(out, "\n"))
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// clipDiff bounds a diff at MaxDiff bytes, on a character boundary.
func clipDiff(d string) string {
	if len(d) <= MaxDiff {
		return d
	}
	cut := MaxDiff
	for cut > 0 && d[cut]&0xC0 == 0x80 {
		cut--
	}
	return d[:cut] + "\n… (diff cut at " + "4 KiB)"
}
