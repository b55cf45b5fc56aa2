package policy

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// maxPath bounds a path's length and steps: paths come from config, but a
// bound keeps a typo from becoming a surprise.
const (
	maxPathLen   = 256
	maxPathSteps = 16
)

// pathStep is one hop of a path: a key of an object, or an index of an array
// (key == "" and index >= 0).
type pathStep struct {
	key   string
	index int
}

// parsePath reads "$.a.b[2].c" (the "$." is optional). Keys are letters,
// digits, '_' and '-'; a key with other characters is written ["key"].
func parsePath(p string) ([]pathStep, error) {
	if p == "" {
		return nil, errors.New("required, e.g. $.repo")
	}
	if len(p) > maxPathLen {
		return nil, fmt.Errorf("longer than %d characters", maxPathLen)
	}
	rest := p
	if rest == "$" {
		return nil, nil
	}
	if strings.HasPrefix(rest, "$") {
		rest = rest[1:]
	} else if !strings.HasPrefix(rest, "[") {
		rest = "." + rest
	}
	var steps []pathStep
	for rest != "" {
		if len(steps) == maxPathSteps {
			return nil, fmt.Errorf("%q has more than %d steps", p, maxPathSteps)
		}
		switch rest[0] {
		case '.':
			n := 1
			for n < len(rest) && keyChar(rest[n]) {
				n++
			}
			if n == 1 {
				return nil, fmt.Errorf("%q: expected a key after '.'", p)
			}
			steps = append(steps, pathStep{key: rest[1:n], index: -1})
			rest = rest[n:]
		case '[':
			end := strings.IndexByte(rest, ']')
			if end < 0 {
				return nil, fmt.Errorf("%q: '[' without ']'", p)
			}
			inner := rest[1:end]
			if len(inner) >= 2 && inner[0] == '"' && inner[len(inner)-1] == '"' {
				key, err := strconv.Unquote(inner)
				if err != nil {
					return nil, fmt.Errorf("%q: bad quoted key %s", p, inner)
				}
				steps = append(steps, pathStep{key: key, index: -1})
			} else {
				i, err := strconv.Atoi(inner)
				if err != nil || i < 0 {
					return nil, fmt.Errorf("%q: [%s] is not an index (0, 1, ...) or a quoted key", p, inner)
				}
				steps = append(steps, pathStep{index: i})
			}
			rest = rest[end+1:]
		default:
			return nil, fmt.Errorf("%q: unexpected %q", p, rest[0])
		}
	}
	return steps, nil
}

func keyChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// lookup follows steps into a decoded JSON document.
func lookupPath(doc any, steps []pathStep) (any, bool) {
	v := doc
	for _, s := range steps {
		if s.index < 0 {
			m, ok := v.(map[string]any)
			if !ok {
				return nil, false
			}
			if v, ok = m[s.key]; !ok {
				return nil, false
			}
			continue
		}
		a, ok := v.([]any)
		if !ok || s.index >= len(a) {
			return nil, false
		}
		v = a[s.index]
	}
	return v, true
}
