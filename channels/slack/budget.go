package slack

import (
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/slack-go/slack"
)

// Block Kit's limits on one message as a whole: Slack refuses more blocks,
// or more text across them, with invalid_blocks / msg_blocks_too_long.
const (
	maxMessageBlocks = 50
	maxMessageText   = 12000
	// overflowReserve is kept free for the line that summarises what did
	// not fit.
	overflowReserve = 300
)

// blockText counts the characters of text a block carries toward
// maxMessageText.
func blockText(b slack.Block) int {
	n := 0
	count := func(t *slack.TextBlockObject) {
		if t != nil {
			n += utf8.RuneCountInString(t.Text)
		}
	}
	switch b := b.(type) {
	case *slack.SectionBlock:
		count(b.Text)
		for _, f := range b.Fields {
			count(f)
		}
	case *slack.HeaderBlock:
		count(b.Text)
	case *slack.ContextBlock:
		for _, e := range b.ContextElements.Elements {
			if t, ok := e.(*slack.TextBlockObject); ok {
				count(t)
			}
		}
	case *slack.MarkdownBlock:
		n += utf8.RuneCountInString(b.Text)
	case *slack.ActionBlock:
		for _, e := range b.Elements.ElementSet {
			if btn, ok := e.(*slack.ButtonBlockElement); ok {
				count(btn.Text)
			}
		}
	}
	return n
}

func blocksText(bs []slack.Block) int {
	n := 0
	for _, b := range bs {
		n += blockText(b)
	}
	return n
}

// fitItems lays items (mrkdwn fields, e.g. a card's facts) out in section
// blocks of at most perSection fields between head and tail, keeping the
// whole message within maxMessageBlocks and maxMessageText whatever head
// and tail hold. Items that do not fit are never dropped silently: a
// context line says how many and how long they are ("3 more facts, 9,200
// characters") and links to link when there is one. noun names an item
// ("fact").
func fitItems(head []slack.Block, items []*slack.TextBlockObject, perSection int, tail []slack.Block, blockID func(string) string, noun, link string) []slack.Block {
	blocksLeft := maxMessageBlocks - len(head) - len(tail)
	textLeft := maxMessageText - blocksText(head) - blocksText(tail)
	// Fit all, or leave room for the overflow line.
	if !fits(items, perSection, blocksLeft, textLeft) {
		blocksLeft--
		textLeft -= overflowReserve
	}
	kept := 0
	for sections, text := 0, 0; kept < len(items); kept++ {
		size := utf8.RuneCountInString(items[kept].Text)
		need := sections
		if kept%perSection == 0 {
			need++
		}
		if need > blocksLeft || text+size > textLeft {
			break
		}
		sections, text = need, text+size
	}
	out := append([]slack.Block{}, head...)
	for rest := items[:kept]; len(rest) > 0; {
		n := min(len(rest), perSection)
		out = append(out, slack.NewSectionBlock(nil, rest[:n], nil, slack.SectionBlockOptionBlockID(blockID("facts"))))
		rest = rest[n:]
	}
	if dropped := items[kept:]; len(dropped) > 0 {
		chars := 0
		for _, it := range dropped {
			chars += utf8.RuneCountInString(it.Text)
		}
		line := fmt.Sprintf("%d more %s, %s characters", len(dropped), plural(noun, len(dropped)), thousands(chars))
		if link != "" {
			line += " · <" + link + "|see the full card>"
		}
		out = append(out, contextLine(blockID("more"), line))
	}
	return append(out, tail...)
}

// fits reports whether every item fits without an overflow line.
func fits(items []*slack.TextBlockObject, perSection, blocksLeft, textLeft int) bool {
	text := 0
	for _, it := range items {
		text += utf8.RuneCountInString(it.Text)
	}
	sections := (len(items) + perSection - 1) / perSection
	return sections <= blocksLeft && text <= textLeft
}

func plural(noun string, n int) string {
	if n == 1 {
		return noun
	}
	return noun + "s"
}

// thousands writes n with comma separators: 9200 -> "9,200".
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
