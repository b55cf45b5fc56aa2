package web

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"net/http"
	"time"

	"brain/engine"
	"brain/tools"
)

// pageNames are the templates/NAME.html pages; each defines "content"
// (and may define "head") inside templates/layout.html.
var pageNames = []string{"sessions", "session", "approvals", "approval", "schedules", "status", "memory", "skills", "login", "bounce", "error", "inbox", "usage", "budgets", "connections"}

// pages are the parsed templates: one set per page, and the timeline item
// on its own for the live stream.
type pages struct {
	md     *markdown
	byName map[string]*template.Template
	item   *template.Template
	cache  itemCache
}

func loadPages() (*pages, error) {
	p := &pages{md: newMarkdown(), byName: map[string]*template.Template{}}
	funcs := template.FuncMap{
		"md":     p.md.render,
		"when":   when,
		"pretty": pretty,
		"clip":   clip,
		"idem":   func() string { return newToken()[:24] },
		"cardOf": func(a engine.Approval, csrf, back string) cardArgs { return cardArgs{A: a, CSRF: csrf, Back: back} },
		"iso":    func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
		"usd":    func(f float64) string { return fmt.Sprintf("$%.2f", f) },
		"dur":    duration,
		"dict": func(kv ...any) map[string]any {
			m := map[string]any{}
			for i := 0; i+1 < len(kv); i += 2 {
				m[kv[i].(string)] = kv[i+1]
			}
			return m
		},
		"diff": diffLines,
		"usageTable": func(title, key string, rows []usageTotal, priced bool) usageTableArgs {
			return usageTableArgs{Title: title, Key: key, Rows: rows, Priced: priced}
		},
	}
	for _, name := range pageNames {
		t, err := template.New(name).Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/parts.html", "templates/"+name+".html")
		if err != nil {
			return nil, fmt.Errorf("console template %s: %w", name, err)
		}
		p.byName[name] = t
	}
	item, err := template.New("item").Funcs(funcs).ParseFS(templateFS, "templates/parts.html")
	if err != nil {
		return nil, fmt.Errorf("console template parts: %w", err)
	}
	p.item = item
	return p, nil
}

// view is what the layout gets: the page's data and who looks at it.
type view struct {
	Page     string
	SignedIn bool
	Who      string
	Open     bool
	Admin    bool
	CSRF     string
	// Inbox counts what waits for the visitor ("Needs you").
	Inbox int
	Data  any
}

type usageTableArgs struct {
	Title, Key string
	Rows       []usageTotal
	Priced     bool
}

// render writes page name with data; a template failure is logged and
// answered 500 (it is a bug: the data is ours).
func (s *Server) render(w http.ResponseWriter, r *http.Request, status int, name string, v visitor, data any) {
	var buf bytes.Buffer
	vw := view{Page: name, SignedIn: v.signedIn, Who: v.name, Open: !v.signedIn && s.open(r), Admin: s.admin(r, v), CSRF: v.csrf, Data: data}
	if name != "login" && name != "bounce" {
		vw.Inbox = s.inboxCount(r, v)
	}
	if err := s.pages.byName[name].ExecuteTemplate(&buf, "layout", vw); err != nil {
		s.log.Error("render console page", tools.LogPath, r.URL.Path, tools.LogErr, err)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// fail answers with the error page.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, v visitor, status int, msg string) {
	s.render(w, r, status, "error", v, errorView{Status: status, Message: msg})
}

type errorView struct {
	Status  int
	Message string
}

type bounceView struct{ Target string }

// cardArgs are the "card" template's: an approval and its forms' CSRF
// token and return page.
type cardArgs struct {
	A    engine.Approval
	CSRF string
	Back string
}

// when formats a time for people: UTC, to the second.
func when(t time.Time) string {
	if t.IsZero() {
		return "—"
	}
	return t.UTC().Format("2006-01-02 15:04:05 UTC")
}

// maxPretty bounds the JSON shown for one tool call's arguments or output.
const maxPretty = 16 << 10

// pretty indents JSON for reading, clipped to maxPretty.
func pretty(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, raw, "", "  "); err != nil {
		return clip(string(raw), maxPretty)
	}
	return clip(buf.String(), maxPretty)
}

// clip cuts s to at most n bytes on a rune boundary, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8Start(s[cut]) {
		cut--
	}
	return s[:cut] + "… (clipped)"
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

// duration writes a span for people: 850ms, 4.2s, 3m05s.
func duration(d time.Duration) string {
	switch {
	case d < 0:
		return "—"
	case d < time.Second:
		return fmt.Sprintf("%dms", d.Milliseconds())
	case d < time.Minute:
		return fmt.Sprintf("%.1fs", d.Seconds())
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
	return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
}
