package tools_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"log/slog"
	"net/url"
	"strings"
	"testing"

	"brain/tools"
)

func TestScrubber_String(t *testing.T) {
	const r = tools.Redacted
	b64 := base64.StdEncoding.EncodeToString
	for _, tc := range []struct {
		name    string
		secrets []string
		in      string
		want    string
	}{
		// What every copy did: the value as configured.
		{"raw", []string{"sk-ant-very-secret"}, "401 for key sk-ant-very-secret.", "401 for key " + r + "."},
		{"several times", []string{"tok-123456"}, "tok-123456 and tok-123456tok-123456", r + " and " + r},
		{"trimmed", []string{"  spaced-secret\n"}, "x spaced-secret y", "x " + r + " y"},
		{"empty input", []string{"tok-123456"}, "", ""},
		{"no secrets", nil, "tok-123456", "tok-123456"},
		{"empty secret", []string{"", "   "}, "a b", "a b"},
		// The length floor: shorter values are not secrets.
		{"under the floor", []string{"abc", "yes"}, "abc yes", "abc yes"},
		{"at the floor", []string{"abcd"}, "abcd abcde", r + " " + r + "e"},
		{"five bytes (the log handler's old floor was 6)", []string{"abcde"}, "key abcde", "key " + r},
		// URL escapes (web, mcp, httptool).
		{"query escape", []string{"tok/with+chars"}, "?k=tok%2Fwith%2Bchars", "?k=" + r},
		{"path escape", []string{"tok/with+chars key"}, "/tok%2Fwith+chars%20key/", "/" + r + "/"},
		// JSON string escapes: encoders that escape HTML (web, mcp) and
		// that do not (httptool), and the `\/` some encoders write.
		{"json quote", []string{`k"ey-1234`}, `{"a":"k\"ey-1234"}`, `{"a":"` + r + `"}`},
		{"json html escaped", []string{"a<b>&c-1"}, `"a\u003cb\u003e\u0026c-1"`, `"` + r + `"`},
		{"json html kept", []string{"a<b>&c\n1"}, `"a<b>&c\n1"`, `"` + r + `"`},
		{"json slash", []string{"tok/with-1"}, `"tok\/with-1"`, `"` + r + `"`},
		// Words of a value (httptool): the token of "Bearer TOKEN" alone,
		// if at least 8 bytes.
		{"word of a value", []string{"Bearer tok-12345678"}, "Bearer tok-12345678 / tok-12345678", r + " / " + r},
		{"short word", []string{"Token ab12cd"}, "Token ab12cd / ab12cd", r + " / ab12cd"},
		// Basic credentials (httptool): the header, the decoded pair and
		// the password.
		{"basic", []string{"Basic " + b64([]byte("ann:pa55w0rd"))}, "as ann:pa55w0rd, pass pa55w0rd, b " + b64([]byte("ann:pa55w0rd")), "as " + r + ", pass " + r + ", b " + r},
		// base64 of a value, padded or not, either alphabet.
		{"base64 std", []string{">>>???x"}, "t=" + b64([]byte(">>>???x")), "t=" + r},
		{"base64 url", []string{">>>???x"}, "t=" + base64.URLEncoding.EncodeToString([]byte(">>>???x")), "t=" + r},
		{"base64 raw", []string{">>>???x"}, "t=" + base64.RawURLEncoding.EncodeToString([]byte(">>>???x")) + ".", "t=" + r + "."},
		// A user:password pair, and a secret URL with user info: the
		// password alone and base64("user:password") as Basic sends it.
		{"user:password", []string{"ann:hunter22"}, "Basic " + b64([]byte("ann:hunter22")), "Basic " + r},
		{"secret url", []string{"postgres://app:hunter22@db/x?sslkey=k-99887766"}, "pw hunter22 key k-99887766 auth " + b64([]byte("app:hunter22")), "pw " + r + " key " + r + " auth " + r},
		// Overlaps: the longest wins, and overlapping secrets become one
		// placeholder, leaving no tail of either.
		{"longest first", []string{"abc123", "abc123456"}, "abc123456 abc123", r + " " + r},
		{"overlapping", []string{"abcdef", "defghi"}, "xabcdefghix", "x" + r + "x"},
		{"adjacent", []string{"abcdef", "ghijkl"}, "abcdefghijkl", r},
		{"overlapping occurrences of one", []string{"abab"}, "ababab", r},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := tools.NewScrubber(tc.secrets...)
			if got := s.String(tc.in); got != tc.want {
				t.Errorf("String(%q) = %q, want %q", tc.in, got, tc.want)
			}
			if got := s.Contains(tc.in); got != (tc.in != tc.want) {
				t.Errorf("Contains(%q) = %v", tc.in, got)
			}
		})
	}
}

func TestScrubber_Nil(t *testing.T) {
	var s *tools.Scrubber
	if s.String("x") != "x" || s.Contains("x") || s.Longest() != 0 || string(s.JSON([]byte(`{}`))) != `{}` {
		t.Error("a nil scrubber changed something")
	}
}

func TestScrubber_Longest(t *testing.T) {
	s := tools.NewScrubber("a/b/c/d/")
	if got, want := s.Longest(), len(url.QueryEscape("a/b/c/d/")); got != want {
		t.Errorf("Longest = %d, want %d (the query escape)", got, want)
	}
}

func TestScrubber_JSON(t *testing.T) {
	s := tools.NewScrubber("secret-1", "12345678")
	for _, tc := range []struct{ name, in, want string }{
		{"no secret: unchanged", `{ "b": 1, "a": 2.50 }`, `{ "b": 1, "a": 2.50 }`},
		{"escapes decoded first", `{"a":"sec\u0072et-1 x"}`, `{"a":"[REDACTED] x"}`},
		{"keys and arrays", `{"secret-1":["secret-1",true]}`, `{"[REDACTED]":["[REDACTED]",true]}`},
		{"numbers", `{"n":12345678,"m":2}`, `{"m":2,"n":"[REDACTED]"}`},
		{"html kept", `{"a":"<b> secret-1"}`, `{"a":"<b> [REDACTED]"}`},
		{"a secret across strings", `"x",secret-1`, `"x",[REDACTED]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := string(s.JSON([]byte(tc.in))); got != tc.want {
				t.Errorf("JSON(%s) = %s, want %s", tc.in, got, tc.want)
			}
		})
	}
	// A secret made of the document's own punctuation.
	odd := tools.NewScrubber(`1,"ab`)
	if got := string(odd.JSON([]byte(`[1,"abc"]`))); got != `"[REDACTED]"` {
		t.Errorf("JSON = %s, want the whole document redacted", got)
	}
}

func TestURLSecrets(t *testing.T) {
	u, _ := url.Parse("https://ann:pw-1234@h/p?key=k1&key=k2&q=x")
	got := strings.Join(tools.URLSecrets(u), " ")
	for _, want := range []string{"pw-1234", "ann:pw-1234", "k1", "k2", "x"} {
		if !strings.Contains(" "+got+" ", " "+want+" ") {
			t.Errorf("URLSecrets = %q, missing %q", got, want)
		}
	}
	if tools.URLSecrets(&url.URL{Scheme: "https", Host: "h"}) != nil {
		t.Error("a plain URL has secrets")
	}
}

func TestRedactHandler(t *testing.T) {
	s := tools.NewScrubber("sk-ant-very-secret", "98765432")
	var buf bytes.Buffer
	log := slog.New(tools.RedactHandler(slog.NewJSONHandler(&buf, nil), s))
	log.With("token", "sk-ant-very-secret").WithGroup("g").Info("calling with sk-ant-very-secret",
		"err", errors.New("401 for sk-ant-very-secret"),
		"any", []string{"sk-ant-very-secret"},
		"n", 98765432, "m", 7,
		slog.Group("inner", "k", "sk-ant-very-secret"))
	out := buf.String()
	if strings.Contains(out, "very-secret") || strings.Contains(out, "98765432") {
		t.Fatalf("secret in logs: %s", out)
	}
	for _, want := range []string{
		`"msg":"calling with [REDACTED]"`, `"token":"[REDACTED]"`, `"err":"401 for [REDACTED]"`,
		`"any":"[[REDACTED]]"`, `"n":"[REDACTED]"`, `"m":7`, `"g":{`, `"inner":{"k":"[REDACTED]"}`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("log %s lacks %s", out, want)
		}
	}

	next := slog.NewTextHandler(&buf, nil)
	if tools.RedactHandler(next, tools.NewScrubber("abc")) != slog.Handler(next) {
		t.Error("with nothing to redact the handler is not next itself")
	}
}

// FuzzScrub checks that no form of a secret survives String or JSON, with
// the input built around two secrets in some form each.
func FuzzScrub(f *testing.F) {
	f.Add("sk-ant-very-secret", "tok/with+chars", "401 for ", " and ", ".", uint8(0), uint8(1))
	f.Add("Basic YW5uOnBhNTV3MHJk", "ann:pa55w0rd", `{"a":"`, `","b":`, "}", uint8(2), uint8(3))
	f.Add("abcdef", "defghi", "x", "", "x", uint8(4), uint8(5))
	f.Add(`k"ey<1234>`, "postgres://u:hunter22@db", `["`, `",`, "]", uint8(6), uint8(7))
	f.Add("aaaa", "aaaaaaaa", "aaa", "a", "aaa", uint8(8), uint8(9))
	f.Fuzz(func(t *testing.T, a, b, pre, mid, post string, ka, kb uint8) {
		fa, fb := formsOf(strings.TrimSpace(a)), formsOf(strings.TrimSpace(b))
		in := pre + fa[int(ka)%len(fa)] + mid + fb[int(kb)%len(fb)] + post
		s := tools.NewScrubber(a, b)
		str, doc := s.String(in), string(s.JSON([]byte(in)))
		for _, v := range []string{a, b} {
			if len(strings.TrimSpace(v)) < tools.MinSecret {
				continue
			}
			if !s.Contains(in) {
				t.Fatalf("Contains(%q) = false with secret %q in it", in, v)
			}
			for _, form := range formsOf(strings.TrimSpace(v)) {
				// A form spelled with the placeholder's characters cannot
				// be told from it.
				if strings.ContainsAny(form, "[]") || strings.Contains(tools.Redacted, form) {
					continue
				}
				if strings.Contains(str, form) {
					t.Fatalf("String(%q) = %q holds %q", in, str, form)
				}
				if strings.Contains(doc, form) {
					t.Fatalf("JSON(%q) = %q holds %q", in, doc, form)
				}
			}
		}
		if json.Valid([]byte(in)) && !json.Valid([]byte(doc)) {
			t.Fatalf("JSON(%q) = %q is not JSON", in, doc)
		}
	})
}

// formsOf lists, independently of the scrubber, every form it promises to
// catch.
func formsOf(v string) []string {
	html, _ := json.Marshal(v)
	var plain bytes.Buffer
	enc := json.NewEncoder(&plain)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	forms := []string{v, url.QueryEscape(v), url.PathEscape(v)}
	for _, q := range []string{string(html), strings.TrimSuffix(plain.String(), "\n")} {
		q = q[1 : len(q)-1]
		forms = append(forms, q, strings.ReplaceAll(q, "/", `\/`))
	}
	for _, e := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
		forms = append(forms, e.EncodeToString([]byte(v)))
	}
	return forms
}

func TestScrubber_Pending(t *testing.T) {
	s := tools.NewScrubber("sk-live-0123456789")
	for _, c := range []struct {
		in   string
		want int
	}{
		{"hello", 0},
		{"the key is sk-li", 5},
		{"the key is s", 1},
		{"sk-live-0123456789", 0}, // whole: String redacts it, nothing pends
		{"", 0},
	} {
		if got := s.Pending(c.in); got != c.want {
			t.Errorf("Pending(%q) = %d, want %d", c.in, got, c.want)
		}
	}
	if (*tools.Scrubber)(nil).Pending("sk-li") != 0 {
		t.Error("a nil scrubber holds text back")
	}
}
