package filestore

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"brain/engine"
)

// clock advances a second per call, so eviction order is deterministic.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { c.t = c.t.Add(time.Second); return c.t }

func open(t *testing.T, budget int64) *Store {
	t.Helper()
	c := &clock{t: time.Unix(1_700_000_000, 0)}
	s, err := Open(filepath.Join(t.TempDir(), "files"), budget, c.now)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestStore_PutGetOnce(t *testing.T) {
	s := open(t, 1<<20)
	h1, err := s.Put([]byte("hello"))
	if err != nil {
		t.Fatal(err)
	}
	h2, _ := s.Put([]byte("hello"))
	if h1 != h2 || h1 != Hash([]byte("hello")) {
		t.Fatalf("hashes %s %s", h1, h2)
	}
	got, err := s.Get(h1)
	if err != nil || string(got) != "hello" {
		t.Fatalf("get = %q, %v", got, err)
	}
	var n int
	_ = filepath.WalkDir(s.dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			n++
		}
		return nil
	})
	if n != 1 {
		t.Errorf("%d files stored, want 1", n)
	}
	if _, err := s.Get(Hash([]byte("other"))); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing: %v", err)
	}
	if _, err := s.Get("../../etc/passwd"); err == nil || errors.Is(err, ErrNotFound) {
		t.Errorf("a path as hash: %v", err)
	}
}

// TestStore_EvictsLeastRecentlyUsed: past the budget the file used longest
// ago goes, and a read counts as a use.
func TestStore_EvictsLeastRecentlyUsed(t *testing.T) {
	s := open(t, 25)
	a, _ := s.Put([]byte(strings.Repeat("a", 10)))
	b, _ := s.Put([]byte(strings.Repeat("b", 10)))
	if _, err := s.Get(a); err != nil { // a is now newer than b
		t.Fatal(err)
	}
	c, err := s.Put([]byte(strings.Repeat("c", 10)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(b); !errors.Is(err, ErrNotFound) {
		t.Errorf("b kept: %v", err)
	}
	for _, h := range []string{a, c} {
		if _, err := s.Get(h); err != nil {
			t.Errorf("evicted the wrong file: %v", err)
		}
	}
	if _, err := s.Put(make([]byte, 26)); err == nil {
		t.Error("a file over the whole budget was stored")
	}
}

func TestStore_DamagedFileIsNotServed(t *testing.T) {
	s := open(t, 1<<20)
	h, _ := s.Put([]byte("good"))
	p, _ := s.path(h)
	if err := os.WriteFile(p, []byte("evil"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(h); !errors.Is(err, ErrNotFound) {
		t.Fatalf("damaged file: %v", err)
	}
}

func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		name string
		data string
		mt   string
		kind Kind
	}{
		{"png", "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "image/png", KindImage},
		{"jpeg", "\xff\xd8\xff\xe0\x00\x10JFIF", "image/jpeg", KindImage},
		{"gif", "GIF89a\x01\x00", "image/gif", KindImage},
		{"webp", "RIFF\x00\x00\x00\x00WEBPVP8 ", "image/webp", KindImage},
		{"pdf", "%PDF-1.7\n", "application/pdf", KindPDF},
		{"markdown", "# Title\n\n* item\n", "text/plain", KindText},
		{"csv", "a,b\n1,2\n", "text/plain", KindText},
		{"json", `{"a": [1, 2]}`, "text/plain", KindText},
		{"go", "package main\n\nfunc main() {}\n", "text/plain", KindText},
		{"utf8", "héllo wörld ✓", "text/plain", KindText},
		{"zip named .txt", "PK\x03\x04\x14\x00binary", "application/zip", KindOther},
		{"binary", "\x00\x01\x02\x03", "application/octet-stream", KindOther},
		{"latin1", "caf\xe9", "text/plain", KindOther},
		{"bmp", "BM\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00", "image/bmp", KindOther},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mt, kind := Classify([]byte(tc.data))
			if kind != tc.kind || (tc.kind != KindOther && mt != tc.mt) {
				t.Errorf("Classify = %s %s, want %s %s", mt, kind, tc.mt, tc.kind)
			}
		})
	}
}

func FuzzClassify(f *testing.F) {
	f.Add([]byte("\x89PNG\r\n\x1a\n"))
	f.Add([]byte("%PDF-"))
	f.Add([]byte("hello"))
	f.Fuzz(func(t *testing.T, data []byte) {
		mt, kind := Classify(data)
		if mt == "" || kind == "" {
			t.Fatalf("Classify(%q) = %q %q", data, mt, kind)
		}
		a := Attach("f", data, 10)
		if (kind == KindImage || kind == KindPDF) != (len(a.Data) > 0) {
			t.Fatalf("kind %s but attachment %+v", kind, a)
		}
	})
}

// TestLoader_FetchesAgain: a file the store lost is fetched from its
// source once and kept; content that changed at the source is refused.
func TestLoader_FetchesAgain(t *testing.T) {
	s := open(t, 1<<20)
	data := []byte("# notes\nhello")
	ref := engine.FileRef{Hash: Hash(data), Name: "notes.md", Source: "slack", SourceID: "F1", URL: "https://files.slack.com/x"}
	served := data
	fetches := 0
	l := &Loader{Store: s, MaxFileBytes: 1 << 20, MaxTextChars: 5, Fetch: map[string]Fetch{
		"slack": func(ctx context.Context, r engine.FileRef, max int64) ([]byte, error) {
			fetches++
			return served, nil
		},
	}}
	for range 2 {
		a, err := l.Load(context.Background(), ref)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(a.Text, "# not\n") || !strings.Contains(a.Text, "first 5 characters") {
			t.Errorf("text = %q", a.Text)
		}
	}
	if fetches != 1 {
		t.Errorf("fetched %d times, want 1", fetches)
	}
	served = []byte("changed")
	other := ref
	other.Hash = Hash([]byte("never stored"))
	if _, err := l.Load(context.Background(), other); err == nil || !strings.Contains(err.Error(), "changed at its source") {
		t.Errorf("changed content: %v", err)
	}
	noSource := ref
	noSource.Hash, noSource.Source = other.Hash, "linear"
	if _, err := l.Load(context.Background(), noSource); err == nil {
		t.Error("a file with no way back loaded")
	}
}
