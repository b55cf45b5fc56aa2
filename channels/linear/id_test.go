package linear

import (
	"regexp"
	"testing"
)

var uuidV4 = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

func TestActivityID(t *testing.T) {
	a := ActivityID("session-1", "42")
	if a != ActivityID("session-1", "42") {
		t.Fatal("not deterministic")
	}
	// Pinned (and checked by hand against SHA-1): ids must not change
	// between releases, or a retry after an upgrade would post twice.
	if want := "92043982-950d-4754-a504-e425c0c5608a"; a != want {
		t.Fatalf("ActivityID = %s, want %s", a, want)
	}
	if !uuidV4.MatchString(a) || !validActivityID(a) {
		t.Fatalf("%q is not a canonical UUID v4", a)
	}
	seen := map[string]bool{}
	for _, parts := range [][]string{{"session-1", "42"}, {"session-1", "43"}, {"session-2", "42"}, {"ab", "c"}, {"a", "bc"}, {"abc"}, {}, {""}, {"", ""}} {
		id := ActivityID(parts...)
		if seen[id] {
			t.Fatalf("collision for %q", parts)
		}
		seen[id] = true
		if !uuidV4.MatchString(id) {
			t.Fatalf("%q is not a UUID v4", id)
		}
	}
}

func TestRandomID(t *testing.T) {
	a, b := randomID(), randomID()
	if a == b || !uuidV4.MatchString(a) || !validActivityID(b) {
		t.Fatalf("%q %q", a, b)
	}
}

func TestValidActivityID(t *testing.T) {
	for s, want := range map[string]bool{
		"6ba7b810-9dad-41d1-80b4-00c04fd430c8":  true,
		"6BA7B810-9DAD-41D1-B0B4-00C04FD430C8":  true,
		"6ba7b810-9dad-51d1-80b4-00c04fd430c8":  false, // v5
		"6ba7b810-9dad-41d1-c0b4-00c04fd430c8":  false, // variant
		"6ba7b8109dad41d180b400c04fd430c8":      false,
		"6ba7b810-9dad-41d1-80b4-00c04fd430cg":  false,
		"6ba7b810-9dad-41d1-80b4-00c04fd430c8 ": false,
		"":                                      false,
	} {
		if got := validActivityID(s); got != want {
			t.Errorf("validActivityID(%q) = %v, want %v", s, got, want)
		}
	}
}
