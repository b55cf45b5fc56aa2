package engine

import (
	"encoding/json"
	"strings"
	"unicode/utf8"

	"brain/tools"
)

// tidyCard bounds a card so every channel can show it.
func tidyCard(c tools.Card, tool string) tools.Card {
	c.Title = clipRunes(strings.TrimSpace(c.Title), 150)
	if c.Title == "" {
		c.Title = "Run " + tool
	}
	if len(c.Facts) > 10 {
		c.Facts = c.Facts[:10]
	}
	for i := range c.Facts {
		c.Facts[i].Label = clipRunes(c.Facts[i].Label, 80)
		c.Facts[i].Value = clipRunes(c.Facts[i].Value, 2000)
	}
	if len(c.Detail) > maxCardDetail {
		c.Detail = strings.ToValidUTF8(c.Detail[:maxCardDetail], "") + "\n… (cut at 1 MiB)"
	}
	for k, v := range c.Found {
		if len(c.Found) > maxFound || len(k) > 64 || len(v) > maxFoundValue {
			// Never cut: apply acts on these values exactly. A tool that
			// finds more must say so in its facts, not here.
			delete(c.Found, k)
		}
	}
	return c
}

// Bounds of a card's Detail and Found.
const (
	maxCardDetail = 1 << 20
	maxFound      = 32
	maxFoundValue = 64 << 10
)

// withFound is a call's arguments with what its preview found at $.found,
// for approval policies.
func withFound(input json.RawMessage, found map[string]string) json.RawMessage {
	var args map[string]json.RawMessage
	if json.Unmarshal(input, &args) != nil || args == nil {
		args = map[string]json.RawMessage{}
	}
	f, err := json.Marshal(found)
	if err != nil {
		return input
	}
	args["found"] = f
	out, err := json.Marshal(args)
	if err != nil {
		return input
	}
	return out
}

func clipRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}
