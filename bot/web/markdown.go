package web

import (
	"bytes"
	"html"
	"html/template"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// maxMarkdown bounds the text rendered as Markdown; the rest is shown as
// plain text, so one huge message cannot make a page slow.
const maxMarkdown = 64 << 10

// markdown renders messages: CommonMark and GitHub tables and
// strikethrough, raw HTML off (shown as the text it is, escaped, rather
// than dropped, so a reader sees what was written), links kept only for
// http, https and mailto, and images shown as links, so a message never
// makes the browser fetch anything.
type markdown struct{ md goldmark.Markdown }

func newMarkdown() *markdown {
	return &markdown{md: goldmark.New(
		goldmark.WithExtensions(extension.Table, extension.Strikethrough),
		goldmark.WithParserOptions(parser.WithASTTransformers(util.Prioritized(safeLinks{}, 100))),
		// Before goldmark's own renderer (priority 1000), so it wins.
		goldmark.WithRendererOptions(renderer.WithNodeRenderers(util.Prioritized(escapedHTML{}, 100))),
	)}
}

// render returns src as safe HTML; on a render failure, or past
// maxMarkdown, it falls back to escaped text.
func (m *markdown) render(src string) template.HTML {
	if len(src) > maxMarkdown {
		return template.HTML("<pre class=\"plain\">" + template.HTMLEscapeString(src) + "</pre>")
	}
	var buf bytes.Buffer
	if err := m.md.Convert([]byte(src), &buf); err != nil {
		return template.HTML("<pre class=\"plain\">" + template.HTMLEscapeString(src) + "</pre>")
	}
	return template.HTML(buf.String()) // goldmark escaped it: raw HTML is off
}

// safeLink reports whether a link destination may be followed: relative,
// or http, https or mailto. The destination is read as a browser will:
// entities decoded (goldmark decodes them when it writes the href), tabs
// and newlines removed, leading spaces and controls trimmed, so
// "java\tscript:" is seen for what it is.
func safeLink(dest string) bool {
	d := strings.Map(func(r rune) rune {
		if r == '\t' || r == '\n' || r == '\r' {
			return -1
		}
		return r
	}, html.UnescapeString(dest))
	d = strings.TrimLeftFunc(d, func(r rune) bool { return r <= ' ' })
	for i, r := range d {
		switch {
		case r == ':':
			switch strings.ToLower(d[:i]) {
			case "http", "https", "mailto":
				return true
			}
			return false
		case r == '/' || r == '?' || r == '#':
			return true // a relative reference: no scheme
		}
	}
	return true
}

// safeLinks rewrites the tree before rendering: images become links to
// their source, links with unsafe destinations become their text, and
// every link opens outside the console without a referrer.
type safeLinks struct{}

func (safeLinks) Transform(doc *ast.Document, reader text.Reader, _ parser.Context) {
	source := reader.Source()
	var images, unsafe []ast.Node
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch n := n.(type) {
		case *ast.Image:
			images = append(images, n)
		case *ast.Link:
			if !safeLink(string(n.Destination)) {
				unsafe = append(unsafe, n)
			} else {
				linkAttrs(n)
			}
		case *ast.AutoLink:
			if !safeLink(string(n.URL(source))) {
				unsafe = append(unsafe, n)
			} else {
				linkAttrs(n)
			}
		}
		return ast.WalkContinue, nil
	})
	for _, n := range images {
		img := n.(*ast.Image)
		link := ast.NewLink()
		link.Destination, link.Title = img.Destination, img.Title
		for c := img.FirstChild(); c != nil; {
			next := c.NextSibling()
			link.AppendChild(link, c)
			c = next
		}
		if !link.HasChildren() {
			link.AppendChild(link, ast.NewString([]byte("image")))
		}
		img.Parent().ReplaceChild(img.Parent(), img, link)
		if safeLink(string(link.Destination)) {
			linkAttrs(link)
		} else {
			unsafe = append(unsafe, link)
		}
	}
	for _, n := range unsafe {
		parent := n.Parent()
		if al, ok := n.(*ast.AutoLink); ok {
			parent.ReplaceChild(parent, n, ast.NewString(al.URL(source)))
			continue
		}
		for c := n.FirstChild(); c != nil; {
			next := c.NextSibling()
			parent.InsertBefore(parent, n, c)
			c = next
		}
		parent.RemoveChild(parent, n)
	}
}

func linkAttrs(n ast.Node) {
	n.SetAttributeString("rel", []byte("nofollow noopener noreferrer"))
	n.SetAttributeString("target", []byte("_blank"))
}

// escapedHTML renders raw HTML, inline or as a block, as escaped text.
type escapedHTML struct{}

func (escapedHTML) RegisterFuncs(reg renderer.NodeRendererFuncRegisterer) {
	reg.Register(ast.KindHTMLBlock, renderHTMLBlock)
	reg.Register(ast.KindRawHTML, renderRawHTML)
}

func renderHTMLBlock(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	n := node.(*ast.HTMLBlock)
	if entering {
		_, _ = w.WriteString(`<pre class="raw">`)
		for i := range n.Lines().Len() {
			line := n.Lines().At(i)
			_, _ = w.Write(util.EscapeHTML(line.Value(source)))
		}
		return ast.WalkContinue, nil
	}
	if n.HasClosure() {
		_, _ = w.Write(util.EscapeHTML(n.ClosureLine.Value(source)))
	}
	_, _ = w.WriteString("</pre>\n")
	return ast.WalkContinue, nil
}

func renderRawHTML(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkSkipChildren, nil
	}
	n := node.(*ast.RawHTML)
	for i := range n.Segments.Len() {
		seg := n.Segments.At(i)
		_, _ = w.Write(util.EscapeHTML(seg.Value(source)))
	}
	return ast.WalkSkipChildren, nil
}
