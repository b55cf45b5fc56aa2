package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/url"
	"sort"
	"strings"
)

const redacted = "[REDACTED]"

// minSecret: shorter values are not redacted; they cannot be meaningful
// secrets, and redacting them would garble ordinary text ("1", "yes").
const minSecret = 4

// publicEnv are environment variables whose values are not secrets and are
// left in results (a PATH shows up in many outputs). Every other configured
// env value is treated as a secret.
var publicEnv = map[string]bool{
	"PATH": true, "HOME": true, "USER": true, "LOGNAME": true, "SHELL": true,
	"LANG": true, "LANGUAGE": true, "TZ": true, "TMPDIR": true, "TERM": true,
	"PWD": true, "NODE_ENV": true,
}

// secretsOf lists the values of cfg that must never reach results, errors
// or logs: the bearer token, env values (but publicEnv and LC_*), and the
// URL's password and query values.
func secretsOf(cfg ServerConfig) []string {
	out := []string{cfg.BearerToken}
	for k, v := range cfg.Env {
		if !publicEnv[k] && !strings.HasPrefix(k, "LC_") {
			out = append(out, v)
		}
	}
	if u, err := url.Parse(cfg.URL); err == nil {
		if p, ok := u.User.Password(); ok {
			out = append(out, p)
		}
		for _, vs := range u.Query() {
			out = append(out, vs...)
		}
	}
	return out
}

// scrubber replaces secrets, raw or in the escaped forms JSON or a URL
// would carry them in.
type scrubber struct {
	variants []string // longest first
}

func newScrubber(secrets []string) *scrubber {
	seen := map[string]bool{}
	s := &scrubber{}
	for _, v := range secrets {
		v = strings.TrimSpace(v)
		if len(v) < minSecret {
			continue
		}
		quoted, _ := json.Marshal(v) // a string always encodes
		for _, f := range []string{v, string(quoted[1 : len(quoted)-1]), url.QueryEscape(v), url.PathEscape(v)} {
			if !seen[f] {
				seen[f] = true
				s.variants = append(s.variants, f)
			}
		}
	}
	// Longest first, so a value is replaced before a part of it.
	sort.Slice(s.variants, func(i, j int) bool { return len(s.variants[i]) > len(s.variants[j]) })
	return s
}

// found reports whether t holds a secret in any form.
func (s *scrubber) found(t string) bool {
	for _, v := range s.variants {
		if strings.Contains(t, v) {
			return true
		}
	}
	return false
}

func (s *scrubber) text(t string) string {
	for _, v := range s.variants {
		t = strings.ReplaceAll(t, v, redacted)
	}
	return t
}

// value redacts secrets in the strings, keys and numbers of a decoded JSON
// value (decoded with UseNumber).
func (s *scrubber) value(v any) any {
	switch v := v.(type) {
	case string:
		return s.text(v)
	case json.Number:
		if s.text(v.String()) != v.String() {
			return redacted
		}
	case []any:
		for i := range v {
			v[i] = s.value(v[i])
		}
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, item := range v {
			out[s.text(k)] = s.value(item)
		}
		return out
	}
	return v
}

// decode parses raw JSON for value; nil when it is not one JSON value.
func decode(raw []byte) (any, bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil || dec.More() {
		return nil, false
	}
	return v, true
}

// scrubHandler redacts secrets from log records: their message and every
// attribute value. demote logs every record at debug level (for the
// transports' own chatter).
type scrubHandler struct {
	inner  slog.Handler
	s      *scrubber
	demote bool
}

func (h scrubHandler) Enabled(ctx context.Context, l slog.Level) bool {
	if h.demote {
		l = slog.LevelDebug
	}
	return h.inner.Enabled(ctx, l)
}

func (h scrubHandler) Handle(ctx context.Context, r slog.Record) error {
	level := r.Level
	if h.demote {
		level = slog.LevelDebug
	}
	out := slog.NewRecord(r.Time, level, h.s.text(r.Message), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(h.attr(a))
		return true
	})
	return h.inner.Handle(ctx, out)
}

func (h scrubHandler) attr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	if v.Kind() == slog.KindGroup {
		attrs := v.Group()
		out := make([]any, len(attrs))
		for i, g := range attrs {
			out[i] = h.attr(g)
		}
		return slog.Group(a.Key, out...)
	}
	switch v.Kind() {
	case slog.KindString, slog.KindAny:
		return slog.String(a.Key, h.s.text(v.String()))
	}
	return slog.Attr{Key: a.Key, Value: v}
}

func (h scrubHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	out := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		out[i] = h.attr(a)
	}
	return scrubHandler{inner: h.inner.WithAttrs(out), s: h.s, demote: h.demote}
}

func (h scrubHandler) WithGroup(name string) slog.Handler {
	return scrubHandler{inner: h.inner.WithGroup(name), s: h.s, demote: h.demote}
}
