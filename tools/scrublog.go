package tools

import (
	"context"
	"log/slog"
)

// RedactHandler wraps next so that no secret of s reaches it: the message
// and every attribute value (in groups too, and in attributes added with
// WithAttrs) are scrubbed; errors and other values are logged as their
// scrubbed text. Keys are left alone. With nothing to redact it is next.
func RedactHandler(next slog.Handler, s *Scrubber) slog.Handler {
	if s == nil || len(s.forms) == 0 {
		return next
	}
	return &redactHandler{next: next, s: s}
}

type redactHandler struct {
	next slog.Handler
	s    *Scrubber
}

func (h *redactHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return h.next.Enabled(ctx, l)
}

func (h *redactHandler) Handle(ctx context.Context, r slog.Record) error {
	out := slog.NewRecord(r.Time, r.Level, h.s.String(r.Message), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(h.attr(a))
		return true
	})
	return h.next.Handle(ctx, out)
}

func (h *redactHandler) attr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, h.s.String(v.String()))
	case slog.KindGroup:
		attrs := v.Group()
		out := make([]any, len(attrs))
		for i, g := range attrs {
			out[i] = h.attr(g)
		}
		return slog.Group(a.Key, out...)
	case slog.KindAny:
		if err, ok := v.Any().(error); ok {
			return slog.String(a.Key, h.s.String(err.Error()))
		}
		return slog.String(a.Key, h.s.String(v.String()))
	default:
		// A number or a time is kept as such unless its text is a secret
		// (an env value that happens to be digits).
		if t := v.String(); h.s.Contains(t) {
			return slog.String(a.Key, h.s.String(t))
		}
		return slog.Attr{Key: a.Key, Value: v}
	}
}

func (h *redactHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	clean := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		clean[i] = h.attr(a)
	}
	return &redactHandler{next: h.next.WithAttrs(clean), s: h.s}
}

func (h *redactHandler) WithGroup(name string) slog.Handler {
	return &redactHandler{next: h.next.WithGroup(name), s: h.s}
}
