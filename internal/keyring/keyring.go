// Package keyring is the one check of a presented API key, shared by the
// HTTP API's bearer keys (bot/api) and the console's key sign-in
// (bot/web).
package keyring

import (
	"crypto/sha256"
	"crypto/subtle"
)

// Keyring checks keys in constant time: keys are compared by their
// SHA-256, so neither length nor content leaks through timing, and every
// key is compared, whichever matches.
type Keyring struct {
	hashes [][32]byte
}

// New makes the keyring of keys; Find answers their indexes.
func New(keys []string) Keyring {
	var k Keyring
	for _, key := range keys {
		k.hashes = append(k.hashes, sha256.Sum256([]byte(key)))
	}
	return k
}

// Empty reports whether no key is configured.
func (k Keyring) Empty() bool { return len(k.hashes) == 0 }

// Find returns the index of the key presented; ok is false for an empty
// or unknown key.
func (k Keyring) Find(key string) (i int, ok bool) {
	if key == "" {
		return 0, false
	}
	h := sha256.Sum256([]byte(key))
	found := -1
	for i, want := range k.hashes {
		if subtle.ConstantTimeCompare(h[:], want[:]) == 1 {
			found = i
		}
	}
	return max(found, 0), found >= 0
}
