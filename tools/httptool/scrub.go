package httptool

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net/url"
	"sort"
	"strings"
)

const redacted = "[REDACTED]"

// Shorter values are not redacted: they cannot be meaningful secrets, and
// redacting them would garble ordinary text ("1", "yes").
const (
	minSecret     = 4 // a whole header value
	minSecretPart = 8 // a word of a value, e.g. the token of "Bearer TOKEN"
)

// scrubber replaces configured secrets in text a service sent back.
type scrubber struct {
	secrets  []string // as configured, for decoded JSON strings
	variants []string // secrets plus escaped forms, for raw text; longest first
	longest  int
}

func newScrubber(values []string) *scrubber {
	seen := map[string]bool{}
	s := &scrubber{}
	add := func(v string, min int) {
		v = strings.TrimSpace(v)
		if len(v) < min || seen[v] {
			return
		}
		seen[v] = true
		s.secrets = append(s.secrets, v)
	}
	for _, v := range values {
		add(v, minSecret)
		fields := strings.Fields(v)
		for _, f := range fields {
			add(f, minSecretPart)
		}
		// Basic credentials may be echoed decoded.
		if len(fields) == 2 && strings.EqualFold(fields[0], "Basic") {
			if dec, err := base64.StdEncoding.DecodeString(fields[1]); err == nil {
				add(string(dec), minSecret)
				if _, pass, ok := strings.Cut(string(dec), ":"); ok {
					add(pass, minSecret)
				}
			}
		}
	}
	sort.Slice(s.secrets, func(i, j int) bool { return len(s.secrets[i]) > len(s.secrets[j]) })
	vseen := map[string]bool{}
	for _, v := range s.secrets {
		for _, f := range []string{v, jsonEscape(v), strings.ReplaceAll(jsonEscape(v), "/", `\/`), url.QueryEscape(v), url.PathEscape(v)} {
			if !vseen[f] {
				vseen[f] = true
				s.variants = append(s.variants, f)
			}
		}
	}
	// Longest first, so a value is replaced before a word inside it.
	sort.Slice(s.variants, func(i, j int) bool { return len(s.variants[i]) > len(s.variants[j]) })
	if len(s.variants) > 0 {
		s.longest = len(s.variants[0])
	}
	return s
}

func jsonEscape(v string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v) // a string always encodes
	out := strings.TrimSpace(b.String())
	return out[1 : len(out)-1]
}

// text redacts secrets, raw or escaped, in s.
func (s *scrubber) text(t string) string {
	for _, v := range s.variants {
		t = strings.ReplaceAll(t, v, redacted)
	}
	return t
}

// json redacts secrets inside the strings (and keys, and numbers) of a JSON
// document, decoding escapes first. It returns the document unchanged when
// it holds no secret or is not one JSON value.
func (s *scrubber) json(doc []byte) []byte {
	if len(s.secrets) == 0 {
		return doc
	}
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil || dec.More() {
		return doc
	}
	v, changed := s.walk(v)
	if !changed {
		return doc
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return []byte(`"` + redacted + `"`)
	}
	return bytes.TrimSpace(b.Bytes())
}

func (s *scrubber) walk(v any) (any, bool) {
	switch v := v.(type) {
	case string:
		out := s.raw(v)
		return out, out != v
	case json.Number:
		if s.raw(v.String()) != v.String() {
			return redacted, true
		}
	case []any:
		changed := false
		for i := range v {
			var c bool
			v[i], c = s.walk(v[i])
			changed = changed || c
		}
		return v, changed
	case map[string]any:
		changed := false
		out := make(map[string]any, len(v))
		for k, item := range v {
			nk := s.raw(k)
			item, c := s.walk(item)
			changed = changed || c || nk != k
			out[nk] = item
		}
		return out, changed
	}
	return v, false
}

// raw redacts the secrets as configured (no escaped forms) in t.
func (s *scrubber) raw(t string) string {
	for _, v := range s.secrets {
		t = strings.ReplaceAll(t, v, redacted)
	}
	return t
}

// excerpt is a short, one-line, scrubbed quote of a body. truncated says the
// body was cut: its tail may hold part of a secret, which no pattern would
// match, so the last longest-secret bytes are dropped first.
func (e *endpoint) excerpt(body []byte, truncated bool) string {
	if truncated {
		body = body[:max(0, len(body)-e.scrub.longest)]
	}
	t := e.scrub.text(string(e.scrub.json(bytes.TrimSpace(body))))
	t = strings.Join(strings.Fields(strings.ToValidUTF8(t, "\uFFFD")), " ")
	return clip(t, maxExcerpt)
}

// clip cuts s to at most n characters, marking the cut with an ellipsis.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
