// Package githubhook receives GitHub's webhooks for conversations with
// brain (issue_comment, pull_request_review_comment, and issues or
// pull_request opened), verifies them over the raw body before parsing,
// turns them into Items and hands each one to an Inbox before GitHub is
// answered. Deciding whether an Item starts or continues a session (a
// mention, an open question, who may talk) is the caller's business.
//
// It must not import brain/store, brain/channels or brain/bot: what it
// needs of them (a durable inbox with dedupe) is the Inbox interface
// below, which bot/githubbridge satisfies.
package githubhook

import (
	"context"
	"strings"
)

// Item kinds.
const (
	// KindComment: a comment was created on an issue or pull request (its
	// conversation or its diff).
	KindComment = "comment"
	// KindOpened: an issue or pull request was opened; its body is the
	// text that may mention the app.
	KindOpened = "opened"
)

// Comment sources, which name GitHub's reaction endpoint for a comment.
const (
	SourceIssueComment  = "issue_comment"
	SourceReviewComment = "review_comment"
	SourceIssue         = "issue" // the issue or pull request's own body
)

// Item is one webhook worth a look.
type Item struct {
	Kind string `json:"kind"`
	// DeliveryID is the X-GitHub-Delivery header: unique per delivery and
	// repeated on redelivery; EventKey when the header is missing.
	DeliveryID string `json:"delivery_id"`
	// EventKey names the event from the signed body ("comment:<id>",
	// "issue:<id>"): the idempotency key of the message it starts.
	EventKey string `json:"event_key"`

	Owner  string `json:"owner"`
	Repo   string `json:"repo"`
	Number int    `json:"number"`
	// PullRequest is true for a pull request's conversation.
	PullRequest bool   `json:"pull_request,omitempty"`
	Title       string `json:"title"`
	Body        string `json:"body"` // the issue or pull request's description
	URL         string `json:"url"`  // its html_url
	BaseRef     string `json:"base_ref,omitempty"`
	HeadRef     string `json:"head_ref,omitempty"`

	// CommentID, CommentSource and Text are the comment (for KindOpened:
	// the issue's id, SourceIssue and its body).
	CommentID     int64  `json:"comment_id"`
	CommentSource string `json:"comment_source"`
	Text          string `json:"text"`
	// Path is the file a review comment is on.
	Path string `json:"path,omitempty"`

	// Author is the login of who wrote Text.
	Author string `json:"author"`
	// Installation is the GitHub App installation that received it (0: none).
	Installation int64 `json:"installation,omitempty"`
}

// Repository is "owner/repo".
func (it Item) Repository() string { return it.Owner + "/" + it.Repo }

// Inbox durably records Items before GitHub is answered. Record reports
// duplicate=true, without error, when the Item's DeliveryID or EventKey
// was recorded before. An error means nothing was recorded (GitHub is
// answered 500 and may redeliver). GitHub waits 10 s, so Record must be
// quick.
type Inbox interface {
	Record(ctx context.Context, it Item) (duplicate bool, err error)
}

// Mentions reports whether text mentions @login as a whole word
// (case-insensitive, as GitHub matches logins).
func Mentions(text, login string) bool {
	if login == "" {
		return false
	}
	low, want := strings.ToLower(text), "@"+strings.ToLower(login)
	for i := 0; ; {
		j := strings.Index(low[i:], want)
		if j < 0 {
			return false
		}
		at := i + j
		end := at + len(want)
		before := at == 0 || !loginByte(low[at-1])
		after := end == len(low) || !loginByte(low[end])
		if before && after {
			return true
		}
		i = end
	}
}

// loginByte reports whether c may be part of a GitHub login ("[bot]"
// logins end in ']', which is no word byte, so they match as written).
func loginByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_'
}

// validID reports whether s is a usable delivery id: 1..128 bytes of
// letters, digits and '-'.
func validID(s string) bool {
	if s == "" || len(s) > 128 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}
