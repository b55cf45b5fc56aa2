package githubhook

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Ignored reasons ParseEvent gives for deliveries that carry nothing to do.
const (
	IgnoredEvent  = "event type not handled"
	IgnoredAction = "action not handled"
	IgnoredBot    = "written by a bot"
)

type user struct {
	Login string `json:"login"`
	Type  string `json:"type"` // User, Bot, Organization
}

type issue struct {
	ID          int64           `json:"id"`
	Number      int             `json:"number"`
	Title       string          `json:"title"`
	Body        *string         `json:"body"`
	HTMLURL     string          `json:"html_url"`
	User        user            `json:"user"`
	PullRequest json.RawMessage `json:"pull_request"`
}

type ref struct {
	Ref string `json:"ref"`
}

type pull struct {
	issue
	Base ref `json:"base"`
	Head ref `json:"head"`
}

type comment struct {
	ID      int64   `json:"id"`
	Body    *string `json:"body"`
	User    user    `json:"user"`
	Path    string  `json:"path"`
	HTMLURL string  `json:"html_url"`
}

type payload struct {
	Action      string   `json:"action"`
	Issue       *issue   `json:"issue"`
	PullRequest *pull    `json:"pull_request"`
	Comment     *comment `json:"comment"`
	Repository  *struct {
		Name  string `json:"name"`
		Owner user   `json:"owner"`
	} `json:"repository"`
	Sender       user `json:"sender"`
	Installation *struct {
		ID int64 `json:"id"`
	} `json:"installation"`
}

// ParseEvent reads a verified delivery of the named event (the
// X-GitHub-Event header). A delivery with nothing to do returns ignored, a
// reason; a broken one of a handled event an error.
func ParseEvent(event string, body []byte) (it Item, ignored string, err error) {
	switch event {
	case "issue_comment", "pull_request_review_comment", "issues", "pull_request":
	default:
		return Item{}, IgnoredEvent, nil
	}
	var p payload
	if err := json.Unmarshal(body, &p); err != nil {
		return Item{}, "", fmt.Errorf("github %s: %w", event, err)
	}
	if p.Repository == nil || !validName(p.Repository.Owner.Login) || !validName(p.Repository.Name) {
		return Item{}, "", fmt.Errorf("github %s: no repository", event)
	}
	it = Item{Owner: p.Repository.Owner.Login, Repo: p.Repository.Name}
	if p.Installation != nil {
		it.Installation = p.Installation.ID
	}
	var author user
	switch event {
	case "issue_comment", "pull_request_review_comment":
		if p.Action != "created" {
			return Item{}, IgnoredAction, nil
		}
		if p.Comment == nil || p.Comment.ID <= 0 {
			return Item{}, "", fmt.Errorf("github %s: no comment", event)
		}
		conv := p.Issue
		it.CommentSource = SourceIssueComment
		if event == "pull_request_review_comment" {
			if p.PullRequest == nil {
				return Item{}, "", fmt.Errorf("github %s: no pull_request", event)
			}
			conv, it.CommentSource, it.Path = &p.PullRequest.issue, SourceReviewComment, p.Comment.Path
			it.PullRequest, it.BaseRef, it.HeadRef = true, p.PullRequest.Base.Ref, p.PullRequest.Head.Ref
		}
		if conv == nil {
			return Item{}, "", fmt.Errorf("github %s: no issue", event)
		}
		it.Kind, it.CommentID, it.Text, author = KindComment, p.Comment.ID, deref(p.Comment.Body), p.Comment.User
		it.EventKey = "comment:" + strconv.FormatInt(p.Comment.ID, 10)
		fill(&it, conv)
	default: // issues, pull_request
		if p.Action != "opened" {
			return Item{}, IgnoredAction, nil
		}
		conv := p.Issue
		if event == "pull_request" {
			if p.PullRequest == nil {
				return Item{}, "", fmt.Errorf("github %s: no pull_request", event)
			}
			conv = &p.PullRequest.issue
			it.PullRequest, it.BaseRef, it.HeadRef = true, p.PullRequest.Base.Ref, p.PullRequest.Head.Ref
		}
		if conv == nil {
			return Item{}, "", fmt.Errorf("github %s: no issue", event)
		}
		fill(&it, conv)
		it.Kind, it.CommentID, it.CommentSource, it.Text, author = KindOpened, conv.ID, SourceIssue, it.Body, conv.User
		it.EventKey = "issue:" + strconv.FormatInt(conv.ID, 10)
	}
	if it.Number <= 0 {
		return Item{}, "", fmt.Errorf("github %s: no issue number", event)
	}
	if author.Login == "" {
		author = p.Sender
	}
	if author.Type == "Bot" || p.Sender.Type == "Bot" || strings.HasSuffix(author.Login, "[bot]") {
		return Item{}, IgnoredBot, nil
	}
	if !validName(author.Login) {
		return Item{}, "", errors.New("github " + event + ": no author")
	}
	it.Author = author.Login
	return it, "", nil
}

func fill(it *Item, c *issue) {
	it.Number, it.Title, it.Body, it.URL = c.Number, c.Title, deref(c.Body), c.HTMLURL
	if len(c.PullRequest) > 0 && string(c.PullRequest) != "null" {
		it.PullRequest = true
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// validName reports whether s can be a GitHub login or repository name:
// 1..100 bytes of letters, digits, '-', '_', '.' (keys are built from
// them, so '/', '#', ':' and spaces never get in).
func validName(s string) bool {
	if s == "" || len(s) > 100 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}
