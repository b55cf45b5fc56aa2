// Package keyring seals the credentials brain stores (OAuth tokens,
// client secrets) with AES-256-GCM, so a copy of the database alone
// reveals none of them. A sealed value names the key that sealed it, so a
// ring holding the current key and older ones opens everything stored
// while a rotation re-seals values under the current key.
//
// It imports only the standard library.
package keyring

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// Prefix starts every sealed value: "brain-sealed:v1:<key id>:<base64>".
// A stored value without it is plain text (written before a key was set).
const Prefix = "brain-sealed:v1:"

// KeySize is the length of a key: AES-256.
const KeySize = 32

// maxKeyFile bounds the key file read (a few keys, one a line).
const maxKeyFile = 64 << 10

// ErrUnknownKey is returned by Open for a value sealed under a key the
// ring does not hold.
var ErrUnknownKey = errors.New("sealed under a key this keyring does not hold")

// Ring is the keys brain seals with: the first is current (Seal uses it),
// the others only open values sealed before a rotation. A nil *Ring holds
// no key: Seal returns its input and Open refuses sealed values.
type Ring struct {
	current string
	aeads   map[string]cipher.AEAD
	ids     []string
}

// New returns a ring of keys, each KeySize bytes, the first current.
func New(keys [][]byte) (*Ring, error) {
	if len(keys) == 0 {
		return nil, errors.New("keyring: no key")
	}
	r := &Ring{aeads: map[string]cipher.AEAD{}}
	for i, k := range keys {
		if len(k) != KeySize {
			return nil, fmt.Errorf("keyring: key %d is %d bytes, want %d (base64 of 32 random bytes)", i+1, len(k), KeySize)
		}
		block, err := aes.NewCipher(k)
		if err != nil {
			return nil, fmt.Errorf("keyring: key %d: %w", i+1, err)
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, fmt.Errorf("keyring: key %d: %w", i+1, err)
		}
		id := KeyID(k)
		if _, dup := r.aeads[id]; dup {
			return nil, fmt.Errorf("keyring: key %d repeats key %s", i+1, id)
		}
		r.aeads[id] = aead
		r.ids = append(r.ids, id)
	}
	r.current = r.ids[0]
	return r, nil
}

// Parse reads keys from text: one base64 key a line (standard or URL
// alphabet, padded or not), the current key first; blank lines and lines
// starting with # are skipped, as are commas between keys.
func Parse(text string) (*Ring, error) {
	var keys [][]byte
	for _, line := range strings.FieldsFunc(text, func(r rune) bool { return r == '\n' || r == ',' }) {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, err := decodeKey(line)
		if err != nil {
			return nil, fmt.Errorf("keyring: key %d: %w", len(keys)+1, err)
		}
		keys = append(keys, k)
	}
	return New(keys)
}

// LoadFile reads a key file (see Parse). The error names the path, never
// the content.
func LoadFile(path string) (*Ring, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read key file: %w", err)
	}
	defer f.Close()
	buf, err := io.ReadAll(io.LimitReader(f, maxKeyFile+1))
	if err != nil {
		return nil, fmt.Errorf("read key file %s: %w", path, err)
	}
	if len(buf) > maxKeyFile {
		return nil, fmt.Errorf("read key file %s: larger than %d bytes", path, maxKeyFile)
	}
	r, err := Parse(string(buf))
	if err != nil {
		return nil, fmt.Errorf("key file %s: %w", path, err)
	}
	return r, nil
}

func decodeKey(s string) ([]byte, error) {
	s = strings.TrimRight(s, "=")
	for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
		if k, err := enc.DecodeString(s); err == nil {
			if len(k) != KeySize {
				return nil, fmt.Errorf("%d bytes, want %d (base64 of 32 random bytes)", len(k), KeySize)
			}
			return k, nil
		}
	}
	return nil, errors.New("not base64 (want base64 of 32 random bytes)")
}

// Generate returns a new random key as Parse reads it.
func Generate() (string, error) {
	k := make([]byte, KeySize)
	if _, err := rand.Read(k); err != nil {
		return "", fmt.Errorf("generate key: %w", err)
	}
	return base64.StdEncoding.EncodeToString(k), nil
}

// KeyID names a key without revealing it: 16 hex digits of an HMAC of a
// fixed label under the key, so the same key always has the same id and
// the id says nothing about the key.
func KeyID(key []byte) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte("brain keyring key id"))
	return hex.EncodeToString(m.Sum(nil)[:8])
}

// Current is the id of the key Seal uses; "" for a nil ring.
func (r *Ring) Current() string {
	if r == nil {
		return ""
	}
	return r.current
}

// IDs lists the ring's key ids, the current first.
func (r *Ring) IDs() []string {
	if r == nil {
		return nil
	}
	return append([]string(nil), r.ids...)
}

// Has reports whether the ring holds the key id.
func (r *Ring) Has(id string) bool {
	if r == nil {
		return false
	}
	_, ok := r.aeads[id]
	return ok
}

// Seal encrypts plain under the current key, bound to context (where the
// value is stored, e.g. "linear_tokens.access_token:org-1"): a sealed
// value moved to another row or column no longer opens. The empty string
// stays empty (no credential); a nil ring returns plain unchanged.
func (r *Ring) Seal(context, plain string) (string, error) {
	if r == nil || plain == "" {
		return plain, nil
	}
	aead := r.aeads[r.current]
	nonce := make([]byte, aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return "", fmt.Errorf("seal: %w", err)
	}
	out := aead.Seal(nonce, nonce, []byte(plain), []byte(context))
	return Prefix + r.current + ":" + base64.RawURLEncoding.EncodeToString(out), nil
}

// Open decrypts a sealed value stored at context. A plain value (no
// Prefix) is returned as is: it was stored before a key was configured,
// and CheckAndSeal seals it at the next start with a key.
func (r *Ring) Open(context, stored string) (string, error) {
	id, body, sealed, err := Split(stored)
	if err != nil || !sealed {
		return stored, err
	}
	if r == nil {
		return "", fmt.Errorf("open %s: sealed under key %s, and no secrets key is configured: %w", context, id, ErrUnknownKey)
	}
	aead, ok := r.aeads[id]
	if !ok {
		return "", fmt.Errorf("open %s: key %s: %w", context, id, ErrUnknownKey)
	}
	raw, err := base64.RawURLEncoding.DecodeString(body)
	if err != nil || len(raw) < aead.NonceSize()+aead.Overhead() {
		return "", fmt.Errorf("open %s: malformed sealed value", context)
	}
	plain, err := aead.Open(nil, raw[:aead.NonceSize()], raw[aead.NonceSize():], []byte(context))
	if err != nil {
		return "", fmt.Errorf("open %s: the value does not open under key %s (altered, or moved from another row)", context, id)
	}
	return string(plain), nil
}

// Split reports whether stored is sealed and, if so, its key id and body.
func Split(stored string) (keyID, body string, sealed bool, err error) {
	rest, ok := strings.CutPrefix(stored, Prefix)
	if !ok {
		return "", "", false, nil
	}
	keyID, body, ok = strings.Cut(rest, ":")
	if !ok || keyID == "" || body == "" {
		return "", "", true, errors.New("malformed sealed value")
	}
	return keyID, body, true, nil
}
