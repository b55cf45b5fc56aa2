package web

import (
	"strings"
	"testing"

	xhtml "golang.org/x/net/html"
)

func TestMarkdown_Safe(t *testing.T) {
	md := newMarkdown()
	for _, tc := range []struct {
		name, in string
		want     []string
		not      []string
	}{
		{"emphasis and code", "**bold** and `code`", []string{"<strong>bold</strong>", "<code>code</code>"}, nil},
		{"raw html is shown as text", "<script>alert(1)</script><b onclick=x>hi</b>", []string{"&lt;script&gt;alert(1)&lt;/script&gt;", "&lt;b onclick=x&gt;"}, []string{"<script", "<b"}},
		{"inline raw html", "a <b onclick=x>b</b> c", []string{"a &lt;b onclick=x&gt;b&lt;/b&gt; c"}, []string{"<b"}},
		{"onerror image tag", `<img src=x onerror=alert(1)>`, []string{"&lt;img src=x onerror=alert(1)&gt;"}, []string{"<img"}},
		{"javascript link", "[click](javascript:alert(1))", []string{"click"}, []string{"href", "javascript"}},
		{"upper-case scheme", "[click](JavaScript:alert(1))", []string{"click"}, []string{"href"}},
		{"entity-encoded scheme", "[click](javascript&#58;alert(1))", []string{"click"}, []string{"href"}},
		{"data link", "[x](data:text/html;base64,PHNjcmlwdD4=)", nil, []string{"href"}},
		{"vbscript autolink", "<vbscript:msgbox(1)>", nil, []string{"href"}},
		{"https link", "[docs](https://example.com/a?b=1)", []string{`href="https://example.com/a?b=1"`, `rel="nofollow noopener noreferrer"`}, nil},
		{"mailto autolink", "<mailto:ops@example.com>", []string{`href="mailto:ops@example.com"`}, nil},
		{"image becomes a link", "![chart](https://example.com/c.png)", []string{`<a href="https://example.com/c.png"`, ">chart</a>"}, []string{"<img"}},
		{"javascript image", "![x](javascript:alert(1))", []string{"x"}, []string{"<img", "href"}},
		{"table", "| a | b |\n|---|---|\n| 1 | 2 |", []string{"<table>", "<td>1</td>"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := string(md.render(tc.in))
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("render(%q) = %s; want %q in it", tc.in, got, w)
				}
			}
			for _, n := range tc.not {
				if strings.Contains(strings.ToLower(got), strings.ToLower(n)) {
					t.Errorf("render(%q) = %s; holds %q", tc.in, got, n)
				}
			}
		})
	}
}

func TestMarkdown_TooLongIsPlainText(t *testing.T) {
	got := string(newMarkdown().render(strings.Repeat("<b>x</b>", maxMarkdown)))
	if !strings.HasPrefix(got, `<pre class="plain">&lt;b&gt;`) {
		t.Fatalf("got %.80s", got)
	}
}

// Tags and attributes goldmark may write for a message; anything else
// (a script, an image, an event handler) means unsafe input got through.
var (
	allowedTags  = map[string]bool{"p": true, "a": true, "strong": true, "em": true, "code": true, "pre": true, "ul": true, "ol": true, "li": true, "blockquote": true, "h1": true, "h2": true, "h3": true, "h4": true, "h5": true, "h6": true, "hr": true, "br": true, "table": true, "thead": true, "tbody": true, "tr": true, "th": true, "td": true, "del": true}
	allowedAttrs = map[string]bool{"href": true, "rel": true, "target": true, "title": true, "class": true, "start": true, "style": false, "align": true}
)

// checkSafeHTML fails when out has a tag or attribute outside the lists,
// or a link that is not safe.
func checkSafeHTML(t *testing.T, in, out string) {
	t.Helper()
	z := xhtml.NewTokenizer(strings.NewReader(out))
	for {
		switch z.Next() {
		case xhtml.ErrorToken:
			return
		case xhtml.StartTagToken, xhtml.SelfClosingTagToken:
			tok := z.Token()
			if !allowedTags[tok.Data] {
				t.Fatalf("render(%q) has a <%s>: %s", in, tok.Data, out)
			}
			for _, a := range tok.Attr {
				if !allowedAttrs[a.Key] {
					t.Fatalf("render(%q) has attribute %s on <%s>: %s", in, a.Key, tok.Data, out)
				}
				if a.Key == "href" && a.Val != "" && !safeLink(a.Val) {
					t.Fatalf("render(%q) links %q: %s", in, a.Val, out)
				}
			}
		}
	}
}

// FuzzMarkdown: whatever the text, the output has no element or
// attribute that runs script or fetches anything.
func FuzzMarkdown(f *testing.F) {
	for _, s := range []string{"<script>x</script>", "[a](javascript:x)", "![a](http://x/y.png)", "<img src=x onerror=y>", "`<b>`", "<http://x>", "0 onerror=", "| a |\n|---|\n| <b> |"} {
		f.Add(s)
	}
	md := newMarkdown()
	f.Fuzz(func(t *testing.T, s string) {
		checkSafeHTML(t, s, string(md.render(s)))
	})
}
