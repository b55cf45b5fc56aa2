package slack

import "net/url"

// WithConsoleURL links approval cards and error notices to their pages in
// brain's web console at base (public_url); "" links nothing.
func WithConsoleURL(base string) Option { return func(p *Poster) { p.consoleURL = base } }

// consoleLink is a mrkdwn link to path in the console, "" without one.
func (p *Poster) consoleLink(path, id, label string) string {
	if p.consoleURL == "" || id == "" {
		return ""
	}
	return "<" + p.consoleURL + path + url.PathEscape(id) + "|" + label + ">"
}
