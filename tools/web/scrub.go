package web

import (
	"encoding/json"
	"net/url"
	"sort"
	"strings"
)

const redacted = "[REDACTED]"

// minSecret: shorter values are not redacted; they cannot be meaningful
// secrets and redacting them would garble ordinary text.
const minSecret = 4

// scrubber replaces configured secrets, raw or in the escaped forms a URL
// or a JSON answer would carry them in.
type scrubber struct {
	variants []string // longest first
}

func newScrubber(secrets []string) *scrubber {
	seen := map[string]bool{}
	s := &scrubber{}
	for _, v := range secrets {
		v = strings.TrimSpace(v)
		if len(v) < minSecret {
			continue
		}
		quoted, _ := json.Marshal(v) // a string always encodes
		for _, f := range []string{v, url.QueryEscape(v), url.PathEscape(v), string(quoted[1 : len(quoted)-1])} {
			if !seen[f] {
				seen[f] = true
				s.variants = append(s.variants, f)
			}
		}
	}
	sort.Slice(s.variants, func(i, j int) bool { return len(s.variants[i]) > len(s.variants[j]) })
	return s
}

func (s *scrubber) text(t string) string {
	for _, v := range s.variants {
		t = strings.ReplaceAll(t, v, redacted)
	}
	return t
}
