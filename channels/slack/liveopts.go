package slack

import (
	"strings"

	"github.com/slack-go/slack"
)

// liveOptions are the post/update options of a live message in update
// mode: the text in a markdown block, the tail's blocks under it.
func liveOptions(threadTS, text string, tail ...slack.Block) []slack.MsgOption {
	opts := []slack.MsgOption{slack.MsgOptionText(truncate(text, maxSection), false),
		slack.MsgOptionBlocks(append([]slack.Block{slack.NewMarkdownBlock("", text)}, tail...)...)}
	if threadTS != "" {
		opts = append(opts, slack.MsgOptionTS(threadTS))
	}
	return opts
}

// cutRunes returns the first n runes of s and whether s was longer,
// cutting at a line or word end near the limit when there is one.
func cutRunes(s string, n int) (string, bool) {
	if n <= 0 {
		return "", s != ""
	}
	r := []rune(s)
	if len(r) <= n {
		return s, false
	}
	head := string(r[:n])
	if i := strings.LastIndexAny(head, "\n "); i > len(head)/2 {
		head = head[:i+1]
	}
	return head, true
}
