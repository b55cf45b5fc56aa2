package linear

import (
	"crypto/rand"
	"crypto/sha1"
	"encoding/binary"
	"fmt"
)

// idNamespace is brain's namespace for activity ids (a fixed random UUID).
var idNamespace = [16]byte{0x6b, 0x1d, 0x0e, 0x52, 0x8a, 0x33, 0x4f, 0x0c, 0x9e, 0x71, 0x25, 0xd4, 0x0b, 0x86, 0x3a, 0xf9}

// ActivityID derives an activity id from parts (say the agent session id,
// the brain session id and an event seq): the same parts always give the
// same id, so a retry, or a replay after a crash, re-sends the same id and
// Linear keeps one activity.
//
// It is built like a name-based UUID v5 (SHA-1 over a namespace and the
// name; each part is length-prefixed so ("ab","c") and ("a","bc") differ),
// but stamped version 4: Linear's schema asks for ids "in UUID v4 format",
// and a v4-shaped id is accepted whether or not Linear checks the version.
func ActivityID(parts ...string) string {
	h := sha1.New()
	h.Write(idNamespace[:])
	var n [binary.MaxVarintLen64]byte
	for _, p := range parts {
		h.Write(n[:binary.PutUvarint(n[:], uint64(len(p)))])
		h.Write([]byte(p))
	}
	var b [16]byte
	copy(b[:], h.Sum(nil))
	return formatUUID(b)
}

// randomID is a random UUID v4, for an activity the caller gave no id.
func randomID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return formatUUID(b)
}

// formatUUID stamps version 4 and the RFC 9562 variant and formats b.
func formatUUID(b [16]byte) string {
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

// validActivityID reports whether s is a UUID v4 in canonical form.
func validActivityID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
			continue
		case 14:
			if c != '4' {
				return false
			}
		case 19:
			if c != '8' && c != '9' && c != 'a' && c != 'b' && c != 'A' && c != 'B' {
				return false
			}
		}
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}
