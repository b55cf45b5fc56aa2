package tools

// This file reads a tool call's arguments once, strictly, into the one
// canonical form that everything after it sees: the approval policies, the
// card, the stored approval and the tool itself. A reader that is more
// lenient than another is a way around a policy: Go's JSON decoding matches
// field names regardless of case, keeps the last of two equal keys and
// refuses a number past a float64 that another reader may still take. So
// every such shape is refused here as invalid input, before anything is
// proposed, and what passes is re-encoded, so no later reader can see
// anything else.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

const (
	// maxArgsDepth bounds how deeply arguments nest.
	maxArgsDepth = 64
	// maxExactInt is the largest integer a float64 holds exactly: a
	// larger integer reads as one value to a tool that decodes an int64
	// and as another to a reader of float64s.
	maxExactInt = 1 << 53
)

// foldPath is a FoldCase entry: "$.key" steps of letters, digits, '_' and '-'.
var foldPath = regexp.MustCompile(`^\$(\.[A-Za-z0-9_-]+)+$`)

// CanonicalInput reads a call's arguments strictly and returns their
// canonical encoding, or an error fit for the model: keys are
// case-sensitive (a key that differs from a property of the input schema,
// or from another key of its object, only in case is refused), duplicate
// keys, numbers a float64 cannot hold (1e400) and integers past ±2^53
// are refused, and the values at FoldCase paths are lower-cased. The
// encoding is compact and keeps the order of the keys. Empty arguments are
// the empty object.
func (t *Tool) CanonicalInput(args json.RawMessage) (json.RawMessage, error) {
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage(`{}`)
	}
	c := canonicaliser{props: t.props, fold: map[string]bool{}}
	for _, p := range t.FoldCase {
		c.fold[p] = true
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	if err := c.value(dec, "$", true, 0); err != nil {
		return nil, fmt.Errorf("arguments refused: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("arguments refused: not one JSON document: something follows it")
	}
	return json.RawMessage(c.out.Bytes()), nil
}

// canonicaliser re-encodes a document token by token as it checks it.
type canonicaliser struct {
	props map[string][]string // the schema's properties, by folded name
	fold  map[string]bool     // FoldCase paths
	out   bytes.Buffer
}

// value reads one value at path at; keyed is true while every step of at
// is an object key, so at can be a FoldCase path.
func (c *canonicaliser) value(dec *json.Decoder, at string, keyed bool, depth int) error {
	if depth > maxArgsDepth {
		return fmt.Errorf("nested deeper than %d levels at %s", maxArgsDepth, at)
	}
	tok, err := dec.Token()
	if err != nil {
		return fmt.Errorf("not valid JSON: %v", err)
	}
	switch tok := tok.(type) {
	case json.Delim:
		if tok == '{' {
			return c.object(dec, at, keyed, depth)
		}
		c.out.WriteByte('[')
		for i := 0; dec.More(); i++ {
			if i > 0 {
				c.out.WriteByte(',')
			}
			if err := c.value(dec, fmt.Sprintf("%s[%d]", at, i), false, depth+1); err != nil {
				return err
			}
		}
		c.out.WriteByte(']')
		return c.end(dec)
	case json.Number:
		if err := checkNumber(tok, at); err != nil {
			return err
		}
		c.out.WriteString(string(tok))
	case string:
		if keyed && c.fold[at] {
			tok = strings.ToLower(tok)
		}
		c.str(tok)
	case bool:
		c.out.WriteString(strconv.FormatBool(tok))
	default:
		c.out.WriteString("null")
	}
	return nil
}

func (c *canonicaliser) object(dec *json.Decoder, at string, keyed bool, depth int) error {
	seen := map[string]string{} // folded key -> key
	c.out.WriteByte('{')
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return fmt.Errorf("not valid JSON: %v", err)
		}
		key := tok.(string) // the decoder allows only strings here
		f := foldKey(key)
		switch other, ok := seen[f]; {
		case ok && other == key:
			return fmt.Errorf("key %q appears twice at %s", key, at)
		case ok:
			return fmt.Errorf("keys %q and %q at %s differ only in case; keys are case-sensitive", other, key, at)
		}
		if names := c.props[f]; len(names) > 0 && !slices.Contains(names, key) {
			return fmt.Errorf("key %q at %s is not %q: keys are case-sensitive", key, at, names[0])
		}
		if len(seen) > 0 {
			c.out.WriteByte(',')
		}
		seen[f] = key
		c.str(key)
		c.out.WriteByte(':')
		if err := c.value(dec, childPath(at, key), keyed && keyPath(key), depth+1); err != nil {
			return err
		}
	}
	c.out.WriteByte('}')
	return c.end(dec)
}

// end reads the closing delimiter of an object or array.
func (c *canonicaliser) end(dec *json.Decoder) error {
	if _, err := dec.Token(); err != nil {
		return fmt.Errorf("not valid JSON: %v", err)
	}
	return nil
}

// str writes s as a JSON string, without escaping <, > and &.
func (c *canonicaliser) str(s string) {
	enc := json.NewEncoder(&c.out)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	c.out.Truncate(c.out.Len() - 1)
}

// checkNumber refuses a number a float64 cannot hold, and an integer that
// a float64 would round.
func checkNumber(n json.Number, at string) error {
	s := string(n)
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(f, 0) {
		return fmt.Errorf("number %s at %s is too large to compare", clipNumber(s), at)
	}
	if strings.ContainsAny(s, ".eE") {
		return nil
	}
	if i, err := strconv.ParseInt(s, 10, 64); err != nil || i > maxExactInt || i < -maxExactInt {
		return fmt.Errorf("integer %s at %s is beyond ±2^53 and cannot be compared exactly", clipNumber(s), at)
	}
	return nil
}

func clipNumber(s string) string {
	if len(s) > 40 {
		return s[:37] + "..."
	}
	return s
}

// childPath is the path of key in the object at at: $.key, or $["odd key"].
func childPath(at, key string) string {
	if keyPath(key) {
		return at + "." + key
	}
	return at + "[" + strconv.Quote(key) + "]"
}

// keyPath is true for a key a path writes after a dot.
func keyPath(key string) bool {
	for i := 0; i < len(key); i++ {
		c := key[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return key != ""
}

// foldKey maps every rune to the smallest of its case-folding orbit, so two
// keys fold alike exactly when strings.EqualFold holds (as Go's JSON
// decoding matches them to a field: "ſ" is "s", the Kelvin sign is "k").
func foldKey(s string) string {
	var b strings.Builder
	for _, r := range s {
		low := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			low = min(low, f)
		}
		b.WriteRune(low)
	}
	return b.String()
}

// schemaProps collects the property names declared anywhere in a schema,
// by folded name.
func schemaProps(schema any, into map[string][]string) {
	switch s := schema.(type) {
	case map[string]any:
		if props, ok := s["properties"].(map[string]any); ok {
			for name := range props {
				f := foldKey(name)
				if !slices.Contains(into[f], name) {
					into[f] = append(into[f], name)
				}
			}
		}
		for _, child := range s {
			schemaProps(child, into)
		}
	case []any:
		for _, child := range s {
			schemaProps(child, into)
		}
	}
}
