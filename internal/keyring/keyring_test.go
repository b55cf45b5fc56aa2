package keyring

import "testing"

// TestKeyring_FindsTheKeyPresented: each configured key is found at its
// index; an unknown key, a prefix of a key, an empty key and any key of
// an empty keyring are not.
func TestKeyring_FindsTheKeyPresented(t *testing.T) {
	k := New([]string{"first-key-0123456789", "second-key-0123456789"})
	if k.Empty() {
		t.Fatal("a keyring of two keys is empty")
	}
	for want, key := range []string{"first-key-0123456789", "second-key-0123456789"} {
		if i, ok := k.Find(key); !ok || i != want {
			t.Errorf("Find(%q) = %d, %v; want %d", key, i, ok, want)
		}
	}
	for _, key := range []string{"", "first-key", "first-key-0123456789x", "third"} {
		if i, ok := k.Find(key); ok {
			t.Errorf("Find(%q) = %d, want not found", key, i)
		}
	}
	if e := New(nil); !e.Empty() {
		t.Fatal("a keyring of no keys is not empty")
	} else if _, ok := e.Find("x"); ok {
		t.Fatal("an empty keyring found a key")
	}
}
