package slack

import (
	"strings"
	"unicode/utf8"
)

const (
	// maxSection is Slack's limit on a section block's text; a reply part
	// is posted as one section and stays within it.
	maxSection = 3000
	fenceLine  = "```"
)

// split cuts mrkdwn text into parts of at most limit runes. It prefers a
// paragraph break, then a line break outside code, then a line break inside
// code (closing the code block and reopening it in the next part), then a
// space; it never cuts inside a <link> or an &entity; when it can help it.
func split(text string, limit int) []string {
	text = strings.TrimSpace(text)
	var parts []string
	for utf8.RuneCountInString(text) > limit {
		cut, inCode := chooseCut(text, limit-len("\n"+fenceLine))
		head, tail := strings.TrimRight(text[:cut], " \n"), strings.TrimLeft(text[cut:], "\n")
		if inCode {
			head += "\n" + fenceLine
			tail = fenceLine + "\n" + tail
		} else {
			tail = strings.TrimLeft(tail, " ")
		}
		if strings.TrimSpace(head) != "" {
			parts = append(parts, head)
		}
		text = tail
	}
	if strings.TrimSpace(text) != "" {
		parts = append(parts, text)
	}
	return parts
}

// chooseCut returns the byte offset to cut text at, within budget runes,
// and whether the cut falls inside a code block.
func chooseCut(text string, budget int) (int, bool) {
	window := text[:byteOffset(text, budget)]
	half := len(window) / 2
	code := codeRanges(text)
	// A cut at r[0] (right after an opening fence) counts as inside, so a
	// part never ends with a lone opening fence.
	inCode := func(i int) bool {
		for _, r := range code {
			if i >= r[0] && i < r[1] {
				return true
			}
		}
		return false
	}
	atOpen := func(i int) bool {
		for _, r := range code {
			if i == r[0] {
				return true
			}
		}
		return false
	}
	best := func(sep string, allowCode bool) int {
		for i := strings.LastIndex(window, sep); i > half; i = strings.LastIndex(window[:i], sep) {
			if (allowCode && !atOpen(i)) || !inCode(i) {
				return i
			}
		}
		return -1
	}
	if i := best("\n\n", false); i > 0 {
		return i, false
	}
	if i := best("\n", false); i > 0 {
		return i, false
	}
	if i := best("\n", true); i > 0 {
		return i, true
	}
	i := best(" ", true)
	if i < 0 {
		i = len(window)
	}
	i = avoidToken(window, i)
	return i, inCode(i)
}

// codeRanges returns the byte ranges of code blocks: from the end of an
// opening fence line to the start of its closing one (or the end).
func codeRanges(text string) [][2]int {
	var out [][2]int
	open := -1
	for pos := 0; pos <= len(text); {
		end := strings.IndexByte(text[pos:], '\n')
		if end < 0 {
			end = len(text)
		} else {
			end += pos
		}
		line := strings.TrimSpace(text[pos:end])
		if strings.HasPrefix(line, fenceLine) && (open >= 0 || !strings.Contains(line[len(fenceLine):], fenceLine)) {
			if open < 0 {
				open = end
			} else {
				out = append(out, [2]int{open, pos})
				open = -1
			}
		}
		pos = end + 1
	}
	if open >= 0 {
		out = append(out, [2]int{open, len(text)})
	}
	return out
}

// avoidToken moves a cut at i back before an unfinished <...> or &...;.
func avoidToken(s string, i int) int {
	if lt := strings.LastIndexByte(s[:i], '<'); lt >= 0 && !strings.Contains(s[lt:i], ">") && lt > 0 {
		i = lt
	}
	if amp := strings.LastIndexByte(s[:i], '&'); amp >= 0 && i-amp < len("&amp;") && !strings.Contains(s[amp:i], ";") && amp > 0 {
		i = amp
	}
	return i
}

// byteOffset returns the byte offset of the n-th rune of s (len(s) if fewer).
func byteOffset(s string, n int) int {
	for i := range s {
		if n == 0 {
			return i
		}
		n--
	}
	return len(s)
}

// truncate shortens s to at most n runes, ending with "…" when cut.
func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return s[:byteOffset(s, n-1)] + "…"
}

// clip shortens mrkdwn text to one part of at most n runes.
func clip(text string, n int) string {
	parts := split(text, n-1)
	if len(parts) <= 1 {
		return strings.Join(parts, "")
	}
	return parts[0] + "…"
}
