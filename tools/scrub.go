package tools

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net/url"
	"slices"
	"strings"
)

// Redacted is what a scrubbed secret is replaced with.
const Redacted = "[REDACTED]"

// Shorter values are not redacted: they cannot be meaningful credentials,
// and redacting them would garble ordinary text ("1", "yes", "json").
//
// The copies this scrubber replaced disagreed (the log handler skipped
// values under 6 bytes, the tool families values under 4); the lower floor
// is the safe one, since a 4- or 5-byte value someone configured as a
// secret is better lost from a log line than leaked into it.
const (
	MinSecret     = 4 // a whole configured value
	minSecretWord = 8 // a word of a value, e.g. the token of "Bearer TOKEN"
)

// Scrubber replaces configured secrets in text: the value as configured
// and the forms it takes on the way out (JSON and URL escapes, base64, the
// decoded pair of a Basic credential, a URL's password). It is immutable
// and safe for concurrent use; a nil Scrubber redacts nothing.
type Scrubber struct {
	forms   []string // every form of every secret
	longest int      // the length of the longest form
}

// NewScrubber builds a scrubber for the secrets. Surrounding white space
// is ignored, and values shorter than MinSecret are not secrets.
func NewScrubber(secrets ...string) *Scrubber {
	var values []string
	add := func(v string, floor int) {
		if v = strings.TrimSpace(v); len(v) >= floor {
			values = append(values, v)
		}
	}
	for _, v := range secrets {
		add(v, MinSecret)
		fields := strings.Fields(v)
		if len(fields) > 1 {
			for _, f := range fields {
				add(f, minSecretWord)
			}
		}
		// A Basic credential may be echoed decoded: "user:password".
		if len(fields) == 2 && strings.EqualFold(fields[0], "Basic") {
			if dec, err := base64.StdEncoding.DecodeString(fields[1]); err == nil {
				add(string(dec), MinSecret)
				if _, pass, ok := strings.Cut(string(dec), ":"); ok {
					add(pass, MinSecret)
				}
			}
		}
		// A secret URL (a DSN, a webhook) holds a password and keys.
		if u, err := url.Parse(strings.TrimSpace(v)); err == nil && u.Scheme != "" && u.Host != "" {
			for _, p := range URLSecrets(u) {
				add(p, MinSecret)
			}
		}
	}
	s := &Scrubber{}
	seen := map[string]bool{}
	for _, v := range values {
		for _, f := range formsOf(v) {
			if !seen[f] {
				seen[f] = true
				s.forms = append(s.forms, f)
				s.longest = max(s.longest, len(f))
			}
		}
	}
	return s
}

// URLSecrets lists the parts of u that are secrets even when the URL as a
// whole is not: the password, the "user:password" pair (sent base64-encoded
// as a Basic credential) and the query values (API keys often travel there).
func URLSecrets(u *url.URL) []string {
	var out []string
	if pass, ok := u.User.Password(); ok {
		out = append(out, pass, u.User.Username()+":"+pass)
	}
	for _, vs := range u.Query() {
		out = append(out, vs...)
	}
	return out
}

// formsOf lists how v may appear in text: as is, inside a JSON string
// (encoders differ on HTML characters and on "/"), escaped in a URL query
// or path, and base64-encoded, padded or not, with either alphabet.
func formsOf(v string) []string {
	forms := []string{v, url.QueryEscape(v), url.PathEscape(v)}
	for _, html := range []bool{true, false} {
		j := jsonEscape(v, html)
		forms = append(forms, j, strings.ReplaceAll(j, "/", `\/`))
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
		forms = append(forms, enc.EncodeToString([]byte(v)))
	}
	return forms
}

// jsonEscape is v as it stands between the quotes of a JSON string.
func jsonEscape(v string, html bool) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(html)
	_ = enc.Encode(v) // a string always encodes
	out := strings.TrimSpace(b.String())
	return out[1 : len(out)-1]
}

// Contains reports whether t holds a secret in any form.
func (s *Scrubber) Contains(t string) bool {
	if s == nil {
		return false
	}
	for _, f := range s.forms {
		if strings.Contains(t, f) {
			return true
		}
	}
	return false
}

// Longest is the length of the longest form of a secret. A caller that
// cut text short drops this many bytes from the cut end first: a secret
// cut in half matches no form.
func (s *Scrubber) Longest() int {
	if s == nil {
		return 0
	}
	return s.longest
}

// Pending is how many bytes at the end of t could be the start of a
// secret cut short: the longest suffix of t that is a proper prefix of some
// form. A caller streaming text holds them back until more text shows
// whether a secret follows.
func (s *Scrubber) Pending(t string) int {
	if s == nil {
		return 0
	}
	n := 0
	for _, f := range s.forms {
		for k := min(len(f)-1, len(t)); k > n; k-- {
			if strings.HasSuffix(t, f[:k]) {
				n = k
				break
			}
		}
	}
	return n
}

// String replaces every secret in t, in any form, with Redacted. Every
// byte of t covered by some form is redacted, even where forms overlap;
// each covered stretch becomes one Redacted, so the output holds no form
// of a secret except one spelled with the placeholder's own characters.
func (s *Scrubber) String(t string) string {
	if s == nil {
		return t
	}
	var spans [][2]int // [start, end) of the stretches each form covers
	for _, f := range s.forms {
		mine := len(spans) // spans[mine:] are f's, in order
		for from := 0; ; {
			i := strings.Index(t[from:], f)
			if i < 0 {
				break
			}
			start, end := from+i, from+i+len(f)
			if last := len(spans) - 1; last >= mine && spans[last][1] >= start {
				spans[last][1] = end // overlaps f's previous occurrence
			} else {
				spans = append(spans, [2]int{start, end})
			}
			from = start + 1 // overlapping occurrences count too
		}
	}
	if len(spans) == 0 {
		return t
	}
	slices.SortFunc(spans, func(a, b [2]int) int { return a[0] - b[0] })
	var b strings.Builder
	at := 0 // t[:at] is written
	for i := 0; i < len(spans); {
		start, end := spans[i][0], spans[i][1]
		for i++; i < len(spans) && spans[i][0] <= end; i++ {
			end = max(end, spans[i][1])
		}
		b.WriteString(t[at:start])
		b.WriteString(Redacted)
		at = end
	}
	b.WriteString(t[at:])
	return b.String()
}

// JSON redacts secrets in one JSON document, keeping it valid JSON: the
// strings, keys and numbers are scrubbed after decoding (so no escape
// hides a secret) and the document is encoded again. A document with no
// secret is returned unchanged (key order and spacing kept); text that is
// not one JSON value is scrubbed as text. Should a secret span the
// document's punctuation, the whole document becomes the string Redacted.
func (s *Scrubber) JSON(doc []byte) []byte {
	if s == nil || len(s.forms) == 0 {
		return doc
	}
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil || dec.More() {
		return []byte(s.String(string(doc)))
	}
	v, changed := s.value(v)
	if !changed && !s.Contains(string(doc)) {
		return doc
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil || s.Contains(b.String()) {
		return []byte(`"` + Redacted + `"`)
	}
	return bytes.TrimSpace(b.Bytes())
}

// value scrubs a decoded JSON value (decoded with UseNumber) and reports
// whether anything changed.
func (s *Scrubber) value(v any) (any, bool) {
	switch v := v.(type) {
	case string:
		out := s.String(v)
		return out, out != v
	case json.Number:
		if s.Contains(v.String()) {
			return Redacted, true
		}
	case []any:
		changed := false
		for i := range v {
			var c bool
			v[i], c = s.value(v[i])
			changed = changed || c
		}
		return v, changed
	case map[string]any:
		changed := false
		out := make(map[string]any, len(v))
		for k, item := range v {
			nk := s.String(k)
			item, c := s.value(item)
			changed = changed || c || nk != k
			out[nk] = item
		}
		return out, changed
	}
	return v, false
}
