package fakemodel

import (
	"encoding/json"
	"strings"
)

// message is the part of an Anthropic or OpenAI message the fake reads.
type message struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// contentText returns the text of a content value as both APIs send it: a
// string, or an array of parts of which the "text" ones count.
func contentText(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	switch raw[0] {
	case '"':
		var s string
		json.Unmarshal(raw, &s)
		return s
	case '[':
		var parts []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		json.Unmarshal(raw, &parts)
		var b strings.Builder
		for _, p := range parts {
			if p.Type == "text" {
				b.WriteString(p.Text)
			}
		}
		return b.String()
	}
	return ""
}

// lastUserText returns the text of the last user message that has some, so
// a turn that only carries tool results still echoes the person's words.
func lastUserText(raw json.RawMessage) string {
	var msgs []message
	if json.Unmarshal(raw, &msgs) != nil {
		return ""
	}
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role != "user" {
			continue
		}
		if t := contentText(msgs[i].Content); t != "" {
			return t
		}
	}
	return ""
}
