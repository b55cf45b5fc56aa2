package sandbox

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func write(s *stream, chunks ...string) *stream {
	for _, c := range chunks {
		_, _ = s.Write([]byte(c))
	}
	return s
}

func TestStream_KeepsHeadAndTail(t *testing.T) {
	s := write(newStream(10), "0123", "456789abcdef", "ghij")
	got, cut := s.text(10)
	if !cut || !strings.HasPrefix(got, "01234\n") || !strings.HasSuffix(got, "\nfghij") || !strings.Contains(got, "10 bytes omitted") {
		t.Fatalf("got %q, %v", got, cut)
	}
	if got, cut := write(newStream(10), "short").text(10); got != "short" || cut {
		t.Fatalf("got %q, %v", got, cut)
	}
	// Kept whole by the stream, cut by a smaller budget.
	if got, _ := write(newStream(100), "abcdefghij").text(4); got != "ab\n[... 6 bytes omitted ...]\nij" {
		t.Fatalf("got %q", got)
	}
}

func TestStream_BoundedMemory(t *testing.T) {
	s := newStream(1000)
	chunk := strings.Repeat("x", 4096)
	for range 1000 {
		_, _ = s.Write([]byte(chunk))
	}
	if len(s.head)+cap(s.tail) > 4*1000+2*4096 || s.size() != 4096*1000 {
		t.Fatalf("head %d, tail cap %d, total %d", len(s.head), cap(s.tail), s.size())
	}
}

func TestStream_CutsBetweenRunes(t *testing.T) {
	s := write(newStream(1000), strings.Repeat("é", 100))
	got, _ := s.text(51)
	if !utf8.ValidString(got) || strings.Contains(got, "\uFFFD") {
		t.Fatalf("cut a rune: %q", got)
	}
}

func TestShare(t *testing.T) {
	for _, c := range []struct {
		budget     int
		a, b       int64
		wantA, wan int
	}{
		{100, 10, 20, 10, 20},
		{100, 10, 500, 10, 90},
		{100, 500, 10, 90, 10},
		{100, 500, 500, 50, 50},
		{0, 5, 5, 0, 0},
	} {
		a, b := share(c.budget, c.a, c.b)
		if a != c.wantA || b != c.wan {
			t.Errorf("share(%d, %d, %d) = %d, %d", c.budget, c.a, c.b, a, b)
		}
	}
}

func TestFit_StaysUnderLimitAfterEscaping(t *testing.T) {
	for _, body := range []string{
		strings.Repeat("\x01", 50000),  // each byte escapes to six
		strings.Repeat("<&>\"", 20000), // not HTML-escaped, but quotes are
		strings.Repeat("ok\n", 100),
	} {
		out := write(newStream(4096), body)
		errs := write(newStream(4096), "warning\n")
		r := result{ExitCode: 1}
		b := fit(&r, out, errs, 4096)
		if len(b) > 4096 || !json.Valid(b) {
			t.Fatalf("%d bytes, valid %v", len(b), json.Valid(b))
		}
		if r.Stderr != "warning\n" {
			t.Errorf("the short stream lost bytes: %q", r.Stderr)
		}
		if r.Truncated != (len(body) > 3000) {
			t.Errorf("truncated = %v for %d bytes", r.Truncated, len(body))
		}
	}
}

func TestDirName(t *testing.T) {
	seen := map[string]string{}
	for _, id := range []string{"ses_01ABC", "a", "../a", "a/b", "", ".", "..", "a b", "a_b", strings.Repeat("x", 65), "é"} {
		d := dirName(id)
		if d == "" || d == "." || d == ".." || strings.ContainsAny(d, "/.\x00 ") || strings.HasPrefix(d, ".") {
			t.Errorf("dirName(%q) = %q", id, d)
		}
		if prev, dup := seen[d]; dup {
			t.Errorf("%q and %q share %q", prev, id, d)
		}
		seen[d] = id
	}
	if dirName("ses_01ABC") != "ses_01ABC" {
		t.Error("a plain id is not kept as is")
	}
}
