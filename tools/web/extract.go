package web

import (
	"html"
	"strings"
	"unicode"
	"unicode/utf8"
)

// This is a text extractor, not an HTML parser: it tokenizes tags,
// comments and raw-text elements the way the HTML spec does, and keeps the
// text a reader would see. It builds no tree, so malformed markup costs at
// most some misplaced breaks, never a failure.

// dropped elements lose their whole content. Foreign elements (svg, math)
// honour "/>" as an empty element; the others are HTML and do not.
var dropped = map[string]bool{
	"script": true, "style": true, "nav": true, "noscript": true, "svg": true,
	"math": true, "template": true, "iframe": true, "canvas": true,
	"select": true, "noembed": true, "noframes": true, "object": true,
}

// rawText elements hold text up to their end tag, with no markup inside.
// title and textarea are RCDATA: entities still count.
var rawText = map[string]bool{
	"script": true, "style": true, "xmp": true, "iframe": true, "noembed": true,
	"noframes": true, "noscript": true, "textarea": true, "title": true,
}

// blocks start and end a paragraph.
var blocks = map[string]bool{
	"p": true, "div": true, "section": true, "article": true, "header": true,
	"footer": true, "main": true, "aside": true, "blockquote": true, "pre": true,
	"table": true, "ul": true, "ol": true, "dl": true, "form": true, "fieldset": true,
	"figure": true, "figcaption": true, "address": true, "details": true,
	"summary": true, "hr": true, "center": true, "menu": true, "hgroup": true,
	"dialog": true, "legend": true, "body": true, "html": true, "textarea": true,
}

// lines start and end a line.
var lines = map[string]bool{
	"br": true, "li": true, "tr": true, "dt": true, "dd": true, "caption": true,
	"option": true,
}

// extractHTML returns a page's title and its readable text: scripts, styles,
// navigation and the like dropped, whitespace collapsed, paragraphs
// separated by a blank line, headings marked "#", list items "-".
func extractHTML(src string) (title, text string) {
	src = strings.ToValidUTF8(src, "\uFFFD")
	low := lowerASCII(src)
	var b textBuilder
	haveTitle := false
	skip, skipDepth := "", 0 // a dropped element being skipped, and its nesting
	for i := 0; i < len(src); {
		lt := strings.IndexByte(src[i:], '<')
		if lt < 0 {
			if skip == "" {
				b.text(src[i:])
			}
			break
		}
		if skip == "" {
			b.text(src[i : i+lt])
		}
		i += lt
		rest := low[i+1:]
		switch {
		case strings.HasPrefix(rest, "!--"):
			i = commentEnd(src, i+4)
		case strings.HasPrefix(rest, "!") || strings.HasPrefix(rest, "?"):
			// Doctype, CDATA, processing instruction: a bogus comment.
			i = indexFrom(src, i+1, ">")
		case strings.HasPrefix(rest, "/"):
			if len(rest) < 2 || !isLetter(rest[1]) {
				i = indexFrom(src, i+2, ">")
				continue
			}
			name, j := tagName(low, i+2)
			i = tagEnd(src, j)
			if skip != "" {
				if name == skip {
					if skipDepth--; skipDepth == 0 {
						skip = ""
					}
				}
				continue
			}
			b.end(name)
		case len(rest) > 0 && isLetter(rest[0]):
			name, j := tagName(low, i+1)
			i = tagEnd(src, j)
			selfClosing := i >= 2 && src[i-2] == '/' && src[i-1] == '>'
			foreignEmpty := selfClosing && (name == "svg" || name == "math")
			if rawText[name] {
				body, next := rawBody(src, low, i, name)
				i = next
				switch {
				case skip != "" || dropped[name]:
				case name == "title":
					if !haveTitle {
						title, haveTitle = strings.Join(strings.Fields(html.UnescapeString(body)), " "), true
					}
				case name == "textarea":
					b.start(name)
					b.text(body)
					b.end(name)
				case name == "xmp":
					b.start("pre")
					b.preText(body)
					b.end("pre")
				}
				continue
			}
			if skip != "" {
				if name == skip && !foreignEmpty {
					skipDepth++
				}
				continue
			}
			if dropped[name] {
				if !foreignEmpty {
					skip, skipDepth = name, 1
				}
				continue
			}
			b.start(name)
		default:
			if skip == "" {
				b.text("<")
			}
			i++
		}
	}
	return title, strings.TrimSpace(b.sb.String())
}

// snippet is the plain text of a short HTML fragment on one line, as search
// providers send them ("<strong>Go</strong> is &quot;fast&quot;").
func snippet(s string) string {
	if !strings.ContainsAny(s, "<&") {
		return strings.Join(strings.Fields(strings.ToValidUTF8(s, "\uFFFD")), " ")
	}
	_, text := extractHTML(s)
	return strings.Join(strings.Fields(text), " ")
}

// textBuilder collapses whitespace: a break (space, line, paragraph) is
// held until the next word, so runs of breaks become the largest of them
// and none is written at the start or the end.
type textBuilder struct {
	sb      strings.Builder
	pending int    // 0 none, 1 space, 2 line, 3 paragraph
	prefix  string // written before the next word: "## ", "- "
	pre     int    // depth of <pre>: whitespace kept
	preHead bool   // just after <pre>: its first newline is dropped
}

const (
	brSpace = 1
	brLine  = 2
	brPara  = 3
)

func (b *textBuilder) brk(n int) {
	if n > b.pending {
		b.pending = n
	}
}

func (b *textBuilder) flush() {
	if b.sb.Len() > 0 {
		switch b.pending {
		case brSpace:
			b.sb.WriteByte(' ')
		case brLine:
			b.sb.WriteByte('\n')
		case brPara:
			b.sb.WriteString("\n\n")
		}
	}
	b.pending = 0
	if b.prefix != "" {
		b.sb.WriteString(b.prefix)
		b.prefix = ""
	}
}

func (b *textBuilder) text(s string) {
	if s == "" {
		return
	}
	if b.pre > 0 {
		b.preText(s)
		return
	}
	s = html.UnescapeString(s)
	words := strings.Fields(s)
	if len(words) == 0 {
		b.brk(brSpace)
		return
	}
	if r, _ := utf8.DecodeRuneInString(s); unicode.IsSpace(r) {
		b.brk(brSpace)
	}
	for i, w := range words {
		if i > 0 {
			b.brk(brSpace)
		}
		b.flush()
		b.sb.WriteString(w)
	}
	if r, _ := utf8.DecodeLastRuneInString(s); unicode.IsSpace(r) {
		b.brk(brSpace)
	}
}

// preText keeps whitespace, except a newline right after <pre>, the blank
// space at the end of each line, and runs of blank lines.
func (b *textBuilder) preText(s string) {
	s = strings.ReplaceAll(html.UnescapeString(s), "\r\n", "\n")
	if b.preHead {
		s = strings.TrimPrefix(s, "\n")
		b.preHead = false
	}
	ls := strings.Split(s, "\n")
	for i, l := range ls {
		if i > 0 {
			// A blank line in a <pre> stays one (several become one).
			if b.pending >= brLine {
				b.brk(brPara)
			} else {
				b.brk(brLine)
			}
		}
		l = strings.TrimRightFunc(l, unicode.IsSpace)
		if l == "" {
			continue
		}
		b.flush()
		b.sb.WriteString(l)
	}
}

func (b *textBuilder) start(name string) {
	switch {
	case len(name) == 2 && name[0] == 'h' && name[1] >= '1' && name[1] <= '6':
		b.brk(brPara)
		b.prefix = strings.Repeat("#", int(name[1]-'0')) + " "
	case name == "li":
		b.brk(brLine)
		b.prefix = "- "
	case name == "pre":
		b.brk(brPara)
		b.pre++
		b.preHead = true
	case blocks[name]:
		b.brk(brPara)
	case lines[name]:
		b.brk(brLine)
	case name == "td" || name == "th":
		b.brk(brSpace)
	}
}

func (b *textBuilder) end(name string) {
	switch {
	case len(name) == 2 && name[0] == 'h' && name[1] >= '1' && name[1] <= '6':
		b.prefix = ""
		b.brk(brPara)
	case name == "li":
		b.prefix = ""
		b.brk(brLine)
	case name == "pre":
		if b.pre > 0 {
			b.pre--
		}
		b.preHead = false
		b.brk(brPara)
	case blocks[name]:
		b.brk(brPara)
	case lines[name]:
		b.brk(brLine)
	case name == "td" || name == "th":
		b.brk(brSpace)
	}
}

// tagName reads a tag name from the lower-cased source at j.
func tagName(low string, j int) (string, int) {
	k := j
	for k < len(low) && !isSpace(low[k]) && low[k] != '/' && low[k] != '>' {
		k++
	}
	return low[j:k], k
}

// tagEnd returns the index after the '>' closing a tag whose attributes
// start at j. A quote opens a value only right after '=', as in the spec,
// so <a title=it's> does not swallow the rest of the page.
func tagEnd(s string, j int) int {
	for j < len(s) {
		switch s[j] {
		case '>':
			return j + 1
		case '=':
			j++
			for j < len(s) && isSpace(s[j]) {
				j++
			}
			if j < len(s) && (s[j] == '"' || s[j] == '\'') {
				k := strings.IndexByte(s[j+1:], s[j])
				if k < 0 {
					return len(s)
				}
				j += k + 2
			}
		default:
			j++
		}
	}
	return len(s)
}

// rawBody returns the text of a raw-text element whose content starts at
// i, and the index after its end tag (the end of input if there is none).
func rawBody(src, low string, i int, name string) (string, int) {
	closer := "</" + name
	for k := i; ; {
		at := strings.Index(low[k:], closer)
		if at < 0 {
			return src[i:], len(src)
		}
		at += k
		after := at + len(closer)
		if after >= len(low) || isSpace(low[after]) || low[after] == '/' || low[after] == '>' {
			return src[i:at], tagEnd(src, after)
		}
		k = after
	}
}

// commentEnd returns the index after a comment whose body starts at j
// ("<!--" already read); "<!-->" and "<!--->" are complete comments.
func commentEnd(s string, j int) int {
	switch {
	case strings.HasPrefix(s[j:], ">"):
		return j + 1
	case strings.HasPrefix(s[j:], "->"):
		return j + 2
	}
	return indexFrom(s, j, "-->")
}

// indexFrom returns the index after the first sep at or after j, or the
// end of s.
func indexFrom(s string, j int, sep string) int {
	if j > len(s) {
		return len(s)
	}
	k := strings.Index(s[j:], sep)
	if k < 0 {
		return len(s)
	}
	return j + k + len(sep)
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'
}

// lowerASCII lower-cases ASCII letters only, so byte offsets stay valid.
func lowerASCII(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
