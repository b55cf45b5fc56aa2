// Package keyring is the one check of a presented API key, shared by the
// HTTP API's bearer keys (bot/api) and the console's key sign-in
// (bot/web).
package keyring

import (
	"crypto/sha256"
	"crypto/subtle"
)

// Keyring checks keys in constant time and answers what each key names
// (a caller, a name): keys are compared by their SHA-256, so neither
// length nor content leaks through timing, and every key is compared,
// whichever matches. The zero value holds no key.
type Keyring[T any] struct {
	hashes [][32]byte
	values []T
}

// Add adds key, naming v.
func (k *Keyring[T]) Add(key string, v T) {
	k.hashes = append(k.hashes, sha256.Sum256([]byte(key)))
	k.values = append(k.values, v)
}

// Empty reports whether no key is configured.
func (k Keyring[T]) Empty() bool { return len(k.hashes) == 0 }

// Find returns what the key presented names; ok is false for an empty or
// unknown key.
func (k Keyring[T]) Find(key string) (v T, ok bool) {
	if key == "" {
		return v, false
	}
	h := sha256.Sum256([]byte(key))
	found := -1
	for i, want := range k.hashes {
		if subtle.ConstantTimeCompare(h[:], want[:]) == 1 {
			found = i
		}
	}
	if found < 0 {
		return v, false
	}
	return k.values[found], true
}
