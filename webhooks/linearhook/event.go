package linearhook

import (
	"encoding/json"
	"fmt"
	"strings"
)

// eventType is the webhook type of agent session events.
const eventType = "AgentSessionEvent"

// signalStop is the prompt signal of a person's stop request.
const signalStop = "stop"

// typeOnly is decoded first, so other webhook types (Issue, Comment, ...),
// whose fields have other shapes, are ignored rather than failing.
type typeOnly struct {
	Type   string `json:"type"`
	Action string `json:"action"`
}

// sessionEvent holds the AgentSessionEventWebhookPayload fields we use.
type sessionEvent struct {
	Type           string `json:"type"`
	Action         string `json:"action"`
	OrganizationID string `json:"organizationId"`
	PromptContext  string `json:"promptContext"`
	// Guidance is the workspace's and team's instructions for agents:
	// Linear documents it as a list of rules ({body, origin}); read a
	// plain string too.
	Guidance         json.RawMessage `json:"guidance"`
	PreviousComments []childComment  `json:"previousComments"`
	AgentSession     struct {
		ID             string        `json:"id"`
		OrganizationID string        `json:"organizationId"`
		CreatorID      string        `json:"creatorId"`
		Creator        *childUser    `json:"creator"`
		Comment        *childComment `json:"comment"`
		Issue          *struct {
			ID         string `json:"id"`
			Identifier string `json:"identifier"`
			Title      string `json:"title"`
			URL        string `json:"url"`
			TeamID     string `json:"teamId"`
		} `json:"issue"`
	} `json:"agentSession"`
	AgentActivity *struct {
		ID      string `json:"id"`
		UserID  string `json:"userId"`
		Signal  string `json:"signal"`
		Content struct {
			Type string `json:"type"`
			Body string `json:"body"`
		} `json:"content"`
		// Body: Linear's guide names agentActivity.body while its schema
		// puts the text in content.body; read both.
		Body string `json:"body"`
	} `json:"agentActivity"`
}

type childComment struct {
	ID     string `json:"id"`
	Body   string `json:"body"`
	UserID string `json:"userId"`
}

type childUser struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// ParseEvent parses a verified webhook body. It returns an Item for
// AgentSessionEvent created and prompted; for anything else (other webhook
// types, other actions, events missing the ids an Item needs, an empty
// prompt) it returns a zero Item and says why in ignored. Only a body that
// is not a JSON object, or an AgentSessionEvent whose fields have the wrong
// shapes, is an error. Item.DeliveryID is set to EventKey; the Handler
// replaces it with the Linear-Delivery header. It never panics.
func ParseEvent(body []byte) (it Item, ignored string, err error) {
	var head typeOnly
	if err := json.Unmarshal(body, &head); err != nil {
		return Item{}, "", fmt.Errorf("parse linear webhook: %w", err)
	}
	if head.Type != eventType {
		return Item{}, "webhook type " + quote(head.Type), nil
	}
	if head.Action != KindCreated && head.Action != KindPrompted {
		return Item{}, "agent session action " + quote(head.Action), nil
	}
	var ev sessionEvent
	if err := json.Unmarshal(body, &ev); err != nil {
		return Item{}, "", fmt.Errorf("parse linear %s event: %w", head.Action, err)
	}
	s := ev.AgentSession
	if !validID(s.ID) {
		return Item{}, "agent session event without a valid session id", nil
	}
	it = Item{
		Kind:      ev.Action,
		SessionID: s.ID,
		ThreadKey: ThreadKey(s.ID),
	}
	if org := firstNonEmpty(ev.OrganizationID, s.OrganizationID); validID(org) {
		it.OrganizationID = org
	}
	if s.Issue != nil {
		it.IssueID, it.IssueIdentifier, it.IssueTitle, it.IssueURL = s.Issue.ID, s.Issue.Identifier, s.Issue.Title, s.Issue.URL
		if validID(s.Issue.TeamID) {
			it.TeamID = s.Issue.TeamID
		}
	}
	creatorID, creatorName := s.CreatorID, ""
	if s.Creator != nil {
		creatorID, creatorName = firstNonEmpty(s.Creator.ID, creatorID), s.Creator.Name
	}
	switch ev.Action {
	case KindCreated:
		it.EventKey = "created:" + s.ID
		it.UserID, it.UserName = creatorID, creatorName
		if s.Comment != nil {
			it.Text = strings.TrimSpace(s.Comment.Body)
		}
		it.Context = strings.TrimSpace(ev.PromptContext)
		it.Guidance = guidance(ev.Guidance)
		for _, c := range ev.PreviousComments {
			it.PreviousComments = append(it.PreviousComments, Comment(c))
		}
	case KindPrompted:
		a := ev.AgentActivity
		if a == nil || !validID(a.ID) {
			return Item{}, "prompted event without a valid agent activity id", nil
		}
		it.EventKey = "prompted:" + a.ID
		it.ActivityID = a.ID
		it.UserID = a.UserID
		if a.UserID != "" && a.UserID == creatorID {
			it.UserName = creatorName
		}
		it.Text = strings.TrimSpace(firstNonEmpty(a.Content.Body, a.Body))
		it.Stop = a.Signal == signalStop
		if it.Text == "" && !it.Stop {
			return Item{}, "prompted event with an empty body", nil
		}
	}
	it.DeliveryID = it.EventKey
	return it, "", nil
}

// guidance reads the webhook's guidance: a string, or a list of rules
// with a body each (and an origin naming the workspace or team).
func guidance(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var text string
	if json.Unmarshal(raw, &text) == nil {
		return strings.TrimSpace(text)
	}
	var rules []struct {
		Body   string `json:"body"`
		Origin *struct {
			Type string `json:"__typename"`
			Name string `json:"name"`
		} `json:"origin"`
	}
	if json.Unmarshal(raw, &rules) != nil {
		return ""
	}
	var parts []string
	for _, r := range rules {
		body := strings.TrimSpace(r.Body)
		if body == "" {
			continue
		}
		if r.Origin != nil && r.Origin.Name != "" {
			body = "From " + r.Origin.Name + ":\n" + body
		}
		parts = append(parts, body)
	}
	return strings.Join(parts, "\n\n")
}

// firstNonEmpty returns the first non-empty string.
func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

// quote bounds and quotes an attacker-chosen string for a log line.
func quote(s string) string {
	if len(s) > 40 {
		s = s[:40] + "..."
	}
	return fmt.Sprintf("%q", s)
}
