package config

import (
	"fmt"
	"math"
	"regexp"
	"strings"
	"unicode"

	"go.yaml.in/yaml/v3"
)

// APIKey is one entry of api_keys: a bearer key for /v1 and /metrics and
// the name its holder acts under. An entry is either a mapping
// ({name: ops, key: ..., act_for: false}) or, the plain form, the key alone;
// ApplyDefaults names a key without a name DefaultAPIKeyName(index).
type APIKey struct {
	Name string `yaml:"name"` // recorded as the decider of approvals made with this key
	Key  string `yaml:"key"`
	// ActFor lets the holder decide approvals in someone else's name: the
	// "by" of a decision may name anyone. Without it "by" must be Name.
	ActFor bool `yaml:"act_for"`
}

// UnmarshalYAML reads the mapping form or the plain form (a bare key).
func (k *APIKey) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		*k = APIKey{}
		if n.ShortTag() != "!!null" {
			k.Key = n.Value
		}
		return nil
	}
	if n.Kind != yaml.MappingNode {
		return fmt.Errorf("line %d: an api key is a string or a mapping {name, key, act_for}", n.Line)
	}
	type fields APIKey // without this method, so Decode reads the mapping
	return n.Decode((*fields)(k))
}

// apiKeyName is what a key's name may be: it is written into approval
// records and compared with approvers lists.
var apiKeyName = regexp.MustCompile(`^[A-Za-z0-9_.@-]+$`)

func (c *Config) validateAPIKeys(p *problems) {
	names := map[string]int{}
	keys := map[string]int{}
	for i, k := range c.APIKeys {
		path := fmt.Sprintf("api_keys[%d]", i)
		switch j, dup := names[k.Name]; {
		case k.Name == "":
			p.add(path+".name", "required")
		case !apiKeyName.MatchString(k.Name):
			p.add(path+".name", "%q: use letters, digits and _ . @ -", k.Name)
		case dup:
			p.add(path+".name", "duplicate %q (also api_keys[%d])", k.Name, j)
		default:
			names[k.Name] = i
		}
		if k.Key == "" {
			// The plain form's variable was expanded at api_keys[i] itself.
			vars := append(p.unsetAt[path], p.unsetAt[path+".key"]...)
			if len(vars) > 0 {
				p.add(path+".key", "required, but the environment variable %s is not set", strings.Join(vars, ", "))
			} else {
				p.add(path+".key", "required")
			}
			continue
		}
		if j, dup := keys[k.Key]; dup {
			p.add(path+".key", "the same key as api_keys[%d]; each key names one caller", j)
			continue
		}
		if bits := KeyBits(k.Key); bits < MinKeyBits {
			p.add(path+".key", "too weak: about %d bits of entropy, under the %d required (32 random characters); make one with: openssl rand -hex 32", bits, MinKeyBits)
		}
		keys[k.Key] = i
	}
}

// MinKeyBits is the least entropy an API key may have: wrong guesses are
// throttled, but a short key still falls to a patient guesser.
const MinKeyBits = 128

// KeyBits estimates a key's entropy in bits, generously for random keys and
// harshly for made-up ones: its length times the bits of a character of its
// alphabet (hex 4, base64 6, ...), the alphabet taken as the classes of
// characters it uses (digits, lower case, upper case, symbols; a key of
// only 0-9a-f is hex) but never more than twice the distinct characters it
// has nor than its character frequencies suggest, and a key that repeats
// itself counts once, so "aaaa…", "abcabc…" or "key-xxxx…" count for little.
func KeyBits(key string) int {
	var digit, lower, upper, other bool
	distinct := map[rune]bool{}
	for _, r := range key {
		distinct[r] = true
		switch {
		case r >= '0' && r <= '9':
			digit = true
		case unicode.IsLower(r):
			lower = true
		case unicode.IsUpper(r):
			upper = true
		default:
			other = true
		}
	}
	alphabet := 0
	if isHex(key) {
		alphabet = 16
	} else {
		for _, c := range []struct {
			used bool
			size int
		}{{digit, 10}, {lower, 26}, {upper, 26}, {other, 32}} {
			if c.used {
				alphabet += c.size
			}
		}
	}
	alphabet = min(alphabet, 2*len(distinct))
	if alphabet < 2 {
		return 0
	}
	runes := []rune(key)
	perChar := min(math.Log2(float64(alphabet)), 1.25*shannon(runes))
	return int(float64(period(runes)) * perChar)
}

// shannon is the entropy in bits of one character drawn from s's own
// character frequencies: near log2 of the alphabet for a random key, low
// for one made mostly of a single character. (The 1.25 above allows for
// how a short random key under-samples its alphabet.)
func shannon(s []rune) float64 {
	counts := map[rune]int{}
	for _, r := range s {
		counts[r]++
	}
	h := 0.0
	for _, c := range counts {
		p := float64(c) / float64(len(s))
		h -= p * math.Log2(p)
	}
	return h
}

// period is the length of the shortest string whose repetition makes up
// s ("abab…" is 2), or len(s) when s does not repeat itself at least twice.
func period(s []rune) int {
	if len(s) == 0 {
		return 0
	}
	border := make([]int, len(s)) // KMP: the longest proper prefix that is also a suffix
	for i := 1; i < len(s); i++ {
		k := border[i-1]
		for k > 0 && s[i] != s[k] {
			k = border[k-1]
		}
		if s[i] == s[k] {
			k++
		}
		border[i] = k
	}
	if p := len(s) - border[len(s)-1]; p <= len(s)/2 {
		return p
	}
	return len(s)
}

// isHex is true for a key of 0-9a-f only, or 0-9A-F only.
func isHex(key string) bool {
	return strings.Trim(key, "0123456789abcdef") == "" || strings.Trim(key, "0123456789ABCDEF") == ""
}
