package keyring

import "testing"

// TestKeyring_FindsTheKeyPresented: each configured key is found with
// what it names; an unknown key, a prefix or extension of a key, an empty
// key and any key of an empty keyring are not.
func TestKeyring_FindsTheKeyPresented(t *testing.T) {
	var k Keyring[string]
	k.Add("first-key-0123456789", "one")
	k.Add("second-key-0123456789", "two")
	if k.Empty() {
		t.Fatal("a keyring of two keys is empty")
	}
	for key, want := range map[string]string{"first-key-0123456789": "one", "second-key-0123456789": "two"} {
		if v, ok := k.Find(key); !ok || v != want {
			t.Errorf("Find(%q) = %q, %v; want %q", key, v, ok, want)
		}
	}
	for _, key := range []string{"", "first-key", "first-key-0123456789x", "third"} {
		if v, ok := k.Find(key); ok {
			t.Errorf("Find(%q) = %q, want not found", key, v)
		}
	}
	var e Keyring[string]
	if !e.Empty() {
		t.Fatal("a keyring of no keys is not empty")
	}
	if _, ok := e.Find("x"); ok {
		t.Fatal("an empty keyring found a key")
	}
}
