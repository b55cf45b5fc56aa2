package keyring

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func newKey(t *testing.T) string {
	t.Helper()
	k, err := Generate()
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestRing_SealOpenRoundTrip(t *testing.T) {
	r, err := Parse(newKey(t))
	if err != nil {
		t.Fatal(err)
	}
	sealed, err := r.Seal("linear_tokens.access_token:org-1", "lin_oauth_secret")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(sealed, "lin_oauth_secret") || !strings.HasPrefix(sealed, Prefix+r.Current()+":") {
		t.Fatalf("sealed = %q", sealed)
	}
	again, _ := r.Seal("linear_tokens.access_token:org-1", "lin_oauth_secret")
	if again == sealed {
		t.Fatal("two seals of one value are equal: the nonce is not fresh")
	}
	got, err := r.Open("linear_tokens.access_token:org-1", sealed)
	if err != nil || got != "lin_oauth_secret" {
		t.Fatalf("Open = %q, %v", got, err)
	}
	// Moved to another row: refused.
	if _, err := r.Open("linear_tokens.access_token:org-2", sealed); err == nil {
		t.Fatal("a value moved to another row opened")
	}
	// Altered: refused.
	alt := sealed[:len(sealed)-2] + "AA"
	if alt == sealed {
		alt = sealed[:len(sealed)-2] + "BB"
	}
	if _, err := r.Open("linear_tokens.access_token:org-1", alt); err == nil {
		t.Fatal("an altered value opened")
	}
	// Plain text (stored before a key) passes through; empty stays empty.
	if got, err := r.Open("x", "plain"); err != nil || got != "plain" {
		t.Fatalf("Open(plain) = %q, %v", got, err)
	}
	if got, _ := r.Seal("x", ""); got != "" {
		t.Fatalf("Seal(\"\") = %q", got)
	}
}

func TestRing_RotationAndUnknownKeys(t *testing.T) {
	oldKey, newK := newKey(t), newKey(t)
	old, _ := Parse(oldKey)
	sealed, _ := old.Seal("c", "tok")
	rotated, err := Parse(newK + "\n# the key before\n" + oldKey + "\n")
	if err != nil {
		t.Fatal(err)
	}
	if rotated.Current() == old.Current() || !rotated.Has(old.Current()) {
		t.Fatalf("ids: rotated %v, old %s", rotated.IDs(), old.Current())
	}
	if got, err := rotated.Open("c", sealed); err != nil || got != "tok" {
		t.Fatalf("old value under the rotated ring = %q, %v", got, err)
	}
	resealed, _ := rotated.Seal("c", "tok")
	if id, _, _, _ := Split(resealed); id != rotated.Current() {
		t.Fatalf("sealed under %s, want the current %s", id, rotated.Current())
	}
	other, _ := Parse(newKey(t))
	if _, err := other.Open("c", sealed); !errors.Is(err, ErrUnknownKey) {
		t.Fatalf("a wrong key: %v, want ErrUnknownKey", err)
	}
	var none *Ring
	if _, err := none.Open("c", sealed); !errors.Is(err, ErrUnknownKey) {
		t.Fatalf("no key: %v, want ErrUnknownKey", err)
	}
	if got, _ := none.Seal("c", "tok"); got != "tok" {
		t.Fatalf("a nil ring sealed: %q", got)
	}
}

func TestParse_Refusals(t *testing.T) {
	for name, text := range map[string]string{
		"empty":     "\n# nothing\n",
		"short":     "c2hvcnQ=",
		"not b64":   "not base64 at all!!",
		"duplicate": "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=",
	} {
		if _, err := Parse(text); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestLoadFile(t *testing.T) {
	dir := t.TempDir()
	key := newKey(t)
	path := filepath.Join(dir, "key")
	if err := os.WriteFile(path, []byte(key+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r, err := LoadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := Parse(key)
	if r.Current() != want.Current() {
		t.Fatalf("id %s, want %s", r.Current(), want.Current())
	}
	if _, err := LoadFile(filepath.Join(dir, "missing")); err == nil {
		t.Fatal("a missing file loaded")
	}
	big := filepath.Join(dir, "big")
	if err := os.WriteFile(big, []byte(strings.Repeat("#", maxKeyFile+10)), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadFile(big); err == nil || strings.Contains(err.Error(), "###") {
		t.Fatalf("oversized file: %v", err)
	}
}
