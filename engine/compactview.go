package engine

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// shortenHead is how much of a shortened tool result the model still sees;
// results over shortenAbove bytes are the ones shortened.
const (
	shortenHead  = 1000
	shortenAbove = 1500
)

// compactionView is what the context.compacted events of a log say about
// rebuilding the context from it: the latest summary and the events it
// replaces, and the tool results shortened to their head. Compactions
// apply even when recorded in a turn that later failed: the history they
// shrank stays as long after a resume.
type compactionView struct {
	summary   *ContextCompacted
	turnID    string // the summary's turn: its inputs stay after the summary
	shortened map[int64]bool
	// gone are the model ids of the calls the summary replaced, so that a
	// summary whose end falls between a call and its result (brain never
	// writes one; an edited log might hold one) leaves no orphan result.
	gone map[string]bool
}

func newCompactionView(evs []Event, payloads []Payload) compactionView {
	var v compactionView
	for i, p := range payloads {
		c, ok := p.(ContextCompacted)
		if !ok {
			continue
		}
		for _, seq := range c.Shortened {
			if v.shortened == nil {
				v.shortened = map[int64]bool{}
			}
			v.shortened[seq] = true
		}
		if c.Summary != "" {
			v.summary, v.turnID = &c, evs[i].TurnID
		}
	}
	return v
}

// replaced reports whether the summary stands in for ev. The input of the
// turn that wrote the summary is kept: the turn goes on answering it.
func (v *compactionView) replaced(ev Event, p Payload) bool {
	if v.summary == nil {
		return false
	}
	if ev.Seq > v.summary.ToSeq {
		r, ok := p.(ToolCallResult)
		return ok && v.gone[r.ModelCallID()]
	}
	switch p := p.(type) {
	case TurnStarted:
		if v.turnID != "" && ev.TurnID == v.turnID {
			return false
		}
	case ToolCall:
		if v.gone == nil {
			v.gone = map[string]bool{}
		}
		v.gone[p.ModelID()] = true
	}
	return true
}

// summaryText is the user text that stands in for the replaced events.
func (v compactionView) summaryText() string {
	c := v.summary
	var b strings.Builder
	fmt.Fprintf(&b, "[Summary of the conversation before this point (events %d to %d of the session's log), written when the context grew too long:]\n%s",
		c.FromSeq, c.ToSeq, c.Summary)
	if len(c.Kept) > 0 {
		b.WriteString("\n\n[Kept word for word from that part:]")
		for _, k := range c.Kept {
			b.WriteString("\n- ")
			b.WriteString(k)
		}
	}
	return b.String()
}

// resultText is the content of the tool.result at seq as the model sees it.
func (v compactionView) resultText(seq int64, text string) string {
	if !v.shortened[seq] {
		return text
	}
	return shorten(text)
}

// shorten keeps the head of a tool result and says what was cut.
func shorten(text string) string {
	if len(text) <= shortenHead {
		return text
	}
	i := shortenHead
	for i > 0 && !utf8.RuneStart(text[i]) {
		i--
	}
	return fmt.Sprintf("%s\n[brain shortened this tool result to keep the context small: the first %d of %d bytes are shown; run the tool again if you need the rest]",
		text[:i], i, len(text))
}
