package web

import (
	"strings"
	"testing"
)

func TestExtractHTML(t *testing.T) {
	for _, tc := range []struct {
		name, in    string
		title, text string
	}{
		{"plain text", "Hello,   world", "", "Hello, world"},
		{"title and body",
			"<!DOCTYPE html><html><head><title> My\n Page </title><meta charset=utf-8></head><body><p>One</p><p>Two</p></body></html>",
			"My Page", "One\n\nTwo"},
		{"first title wins", "<title>A</title><title>B</title>x", "A", "x"},
		{"script style noscript dropped",
			"<p>a</p><script>var x = '<p>no</p>';</script><style>p{color:red}</style><noscript>enable js</noscript><p>b</p>",
			"", "a\n\nb"},
		{"script end tag is case-insensitive", "a<SCRIPT type=x>if (a</b) {}</ScRiPt >b", "", "ab"},
		{"script look-alike end tag", "a<script>x = '</scripts>';</script>b", "", "ab"},
		{"nav and nested nav dropped", "<nav><a>Home</a><nav>inner</nav><a>About</a></nav><p>Body</p>", "", "Body"},
		{"svg dropped, self-closing svg is empty", "<svg><text>icon</text><svg>in</svg></svg>A<svg/>B", "", "AB"},
		{"template select iframe dropped", "<template><p>t</p></template><select><option>o</option></select><iframe>f</iframe>ok", "", "ok"},
		{"headings marked", "<h1>Title</h1><p>Intro</p><h3><a href=/x>Sub</a> part</h3>text", "", "# Title\n\nIntro\n\n### Sub part\n\ntext"},
		{"empty heading leaves no marker", "<h2></h2><p>x</p>", "", "x"},
		{"list items", "<ul><li>one</li><li>two <b>bold</b></li></ul>after", "", "- one\n- two bold\n\nafter"},
		{"link text kept", `See <a href="https://example.com/?a=1&amp;b=2">the docs</a>.`, "", "See the docs."},
		{"inline tags join words", "<b>foo</b>bar <i>baz</i>", "", "foobar baz"},
		{"br and table cells", "a<br>b<br/>c<table><tr><td>1</td><td>2</td></tr><tr><td>3</td></tr></table>", "", "a\nb\nc\n\n1 2\n3"},
		{"entities decoded", "AT&amp;T &lt;tag&gt; &quot;q&quot; &#39;s&#x27; caf&eacute; a&nbsp;b", "", `AT&T <tag> "q" 's' café a b`},
		{"comments dropped", "a<!-- <p>hidden</p> -->b<!---->c<!-->d", "", "abcd"},
		{"doctype cdata and processing instructions dropped", "<?xml version='1.0'?><!DOCTYPE html>a<![CDATA[x]]>b", "", "ab"},
		{"quoted > in attribute", `<a title="1 > 2" href='x>y'>link</a>`, "", "link"},
		{"apostrophe in unquoted value", "<a title=it's>x</a> and y", "", "x and y"},
		{"stray less-than is text", "1 < 2 and 3<4 <3", "", "1 < 2 and 3<4 <3"},
		{"bogus end tag", "a</ 3>b</>c", "", "abc"},
		{"pre keeps whitespace", "<p>x</p><pre>\nline 1\n  indented   \n\nline 3</pre><p>y</p>", "", "x\n\nline 1\n  indented\n\nline 3\n\ny"},
		{"whitespace collapsed", "  <p>\n\t a \n b </p>\n\n\n<div>  c  </div>  ", "", "a b\n\nc"},
		{"unclosed script eats the rest", "a<script>b", "", "a"},
		{"unclosed comment eats the rest", "a<!-- b", "", "a"},
		{"unclosed tag", "a<div class=", "", "a"},
		{"textarea is text", "<textarea>x &amp; <b>y</b></textarea>", "", "x & <b>y</b>"},
		{"invalid UTF-8 replaced", "a\xffb", "", "a\uFFFDb"},
		{"uppercase tags", "<P>one</P><H2>two</H2>", "", "one\n\n## two"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			title, text := extractHTML(tc.in)
			if title != tc.title || text != tc.text {
				t.Errorf("extractHTML(%q)\n got title %q text %q\nwant title %q text %q", tc.in, title, text, tc.title, tc.text)
			}
		})
	}
}

func TestSnippet(t *testing.T) {
	for in, want := range map[string]string{
		"<strong>Go</strong> is &quot;fast&quot;": `Go is "fast"`,
		"  plain\n text ":                         "plain text",
		"<p>a</p><p>b</p>":                        "a b",
		"":                                        "",
	} {
		if got := snippet(in); got != want {
			t.Errorf("snippet(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestKindOf(t *testing.T) {
	for ct, want := range map[string]kind{
		"":                                kindUnknown,
		"application/octet-stream":        kindUnknown,
		"text/html; charset=utf-8":        kindHTML,
		"TEXT/HTML":                       kindHTML,
		"application/xhtml+xml":           kindHTML,
		"text/plain":                      kindText,
		"text/markdown; charset=utf-8":    kindText,
		"application/json":                kindText,
		"application/vnd.api+json":        kindText,
		"application/rss+xml":             kindText,
		"image/png":                       kindBinary,
		"image/svg+xml":                   kindBinary,
		"application/pdf":                 kindBinary,
		"application/zip":                 kindBinary,
		"video/mp4":                       kindBinary,
		"font/woff2":                      kindBinary,
		"text/html; charset=\"unclosed":   kindHTML,
		"application/x-www-form-whatever": kindBinary,
	} {
		if got := kindOf(ct); got != want {
			t.Errorf("kindOf(%q) = %v, want %v", ct, got, want)
		}
	}
}

func TestDecodeText(t *testing.T) {
	for _, tc := range []struct {
		name, body, ct string
		html           bool
		want           string
	}{
		{"utf-8", "caf\xc3\xa9", "text/plain; charset=utf-8", false, "café"},
		{"latin-1 header", "caf\xe9", "text/plain; charset=ISO-8859-1", false, "café"},
		{"windows-1252 quotes", "\x93hi\x94 \x80", "text/plain; charset=windows-1252", false, "“hi” €"},
		{"meta charset", "<meta charset=\"iso-8859-1\"><p>caf\xe9", "text/html", true, "<meta charset=\"iso-8859-1\"><p>café"},
		{"meta ignored for text", "charset=latin1 caf\xe9", "text/plain", false, "charset=latin1 caf\uFFFD"},
		{"utf-8 bom", "\xef\xbb\xbfhi", "", false, "hi"},
		{"utf-16le bom", "\xff\xfeh\x00i\x00", "", false, "hi"},
		{"utf-16be bom", "\xfe\xff\x00h\x00i", "", false, "hi"},
		{"unknown charset keeps ascii", "ab\x82", "text/plain; charset=shift_jis", false, "ab\uFFFD"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := decodeText([]byte(tc.body), tc.ct, tc.html); got != tc.want {
				t.Errorf("decodeText = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestClip(t *testing.T) {
	if got := clip("héllo wörld", 5); got != "héll…" {
		t.Errorf("clip = %q", got)
	}
	if got := clip("short", 5); got != "short" {
		t.Errorf("clip = %q", got)
	}
	if got := cutRunes(strings.Repeat("é", 10), 3); got != "ééé" {
		t.Errorf("cutRunes = %q", got)
	}
}
