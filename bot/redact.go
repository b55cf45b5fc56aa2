package bot

import (
	"context"
	"log/slog"
	"strings"
)

// redactHandler replaces configured secret values in log records, so a
// token that slips into an error message never reaches the logs.
type redactHandler struct {
	next     slog.Handler
	replacer *strings.Replacer
}

// newRedactHandler wraps next; secrets shorter than 6 characters are not
// redacted (they would mangle ordinary words and are not real credentials).
func newRedactHandler(next slog.Handler, secrets []string) slog.Handler {
	var pairs []string
	for _, s := range secrets {
		if len(s) >= 6 {
			pairs = append(pairs, s, "[REDACTED]")
		}
	}
	if len(pairs) == 0 {
		return next
	}
	return &redactHandler{next: next, replacer: strings.NewReplacer(pairs...)}
}

func (h *redactHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return h.next.Enabled(ctx, l)
}

func (h *redactHandler) Handle(ctx context.Context, r slog.Record) error {
	out := slog.NewRecord(r.Time, r.Level, h.replacer.Replace(r.Message), r.PC)
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
		return slog.String(a.Key, h.replacer.Replace(v.String()))
	case slog.KindGroup:
		attrs := v.Group()
		out := make([]any, len(attrs))
		for i, g := range attrs {
			out[i] = h.attr(g)
		}
		return slog.Group(a.Key, out...)
	case slog.KindAny:
		if err, ok := v.Any().(error); ok {
			return slog.String(a.Key, h.replacer.Replace(err.Error()))
		}
		return slog.String(a.Key, h.replacer.Replace(v.String()))
	default:
		return slog.Attr{Key: a.Key, Value: v}
	}
}

func (h *redactHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	clean := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		clean[i] = h.attr(a)
	}
	return &redactHandler{next: h.next.WithAttrs(clean), replacer: h.replacer}
}

func (h *redactHandler) WithGroup(name string) slog.Handler {
	return &redactHandler{next: h.next.WithGroup(name), replacer: h.replacer}
}
