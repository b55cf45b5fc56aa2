package engine

import (
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
	return c
}

func clipRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}
