package slackfake

import (
	"encoding/json"
	"fmt"
	"net/url"
	"unicode/utf8"
)

// Slack's documented limits on a modal view.
const (
	maxViewTitle    = 24
	maxViewBlocks   = 100
	maxMetadata     = 3000
	maxInputLabel   = 2000
	maxInputInitial = 3000
)

// View is a modal opened with views.open.
type View struct {
	ID        string
	TriggerID string
	// CallbackID and PrivateMetadata come back in the view_submission.
	CallbackID      string
	PrivateMetadata string
	Title           string
	// Blocks is the raw JSON array of the view's blocks.
	Blocks json.RawMessage
}

// Views returns the modals opened so far, oldest first.
func (s *Server) Views() []View {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]View(nil), s.views...)
}

// DMChannel is the id conversations.open answers for a DM with user.
func DMChannel(user string) string { return "D" + user }

type viewJSON struct {
	Type            string          `json:"type"`
	Title           *textObject     `json:"title"`
	Submit          *textObject     `json:"submit"`
	CallbackID      string          `json:"callback_id"`
	PrivateMetadata string          `json:"private_metadata"`
	Blocks          json.RawMessage `json:"blocks"`
}

type inputBlock struct {
	Type    string      `json:"type"`
	BlockID string      `json:"block_id"`
	Label   *textObject `json:"label"`
	Element *struct {
		Type         string `json:"type"`
		ActionID     string `json:"action_id"`
		InitialValue string `json:"initial_value"`
		MaxLength    int    `json:"max_length"`
		// IsDecimalAllowed is required on a number_input.
		IsDecimalAllowed *bool `json:"is_decimal_allowed"`
	} `json:"element"`
}

// viewsOpenLocked answers views.open: a trigger id and a modal within
// Slack's limits, with input blocks holding plain_text_input or
// number_input elements.
func (s *Server) viewsOpenLocked(p url.Values) map[string]any {
	if p.Get("trigger_id") == "" {
		return apiError("invalid_trigger_id")
	}
	var v viewJSON
	if json.Unmarshal([]byte(p.Get("view")), &v) != nil || v.Type != "modal" || v.Title == nil ||
		v.Title.Type != "plain_text" || !textOK(v.Title, maxViewTitle) ||
		utf8.RuneCountInString(v.CallbackID) > maxID || len(v.PrivateMetadata) > maxMetadata {
		return apiError("invalid_arguments")
	}
	var blocks []json.RawMessage
	if json.Unmarshal(v.Blocks, &blocks) != nil || len(blocks) == 0 || len(blocks) > maxViewBlocks {
		return apiError("invalid_arguments")
	}
	inputs := 0
	for _, raw := range blocks {
		var in inputBlock
		if json.Unmarshal(raw, &in) != nil {
			return apiError("invalid_arguments")
		}
		if in.Type != "input" {
			var b block
			if json.Unmarshal(raw, &b) != nil || !b.decode() || !checkBlock(b) {
				return apiError("invalid_arguments")
			}
			continue
		}
		inputs++
		if in.Label == nil || in.Label.Type != "plain_text" || !textOK(in.Label, maxInputLabel) ||
			in.Element == nil || !inputElementOK(in.Element.Type, in.Element.IsDecimalAllowed) || in.Element.ActionID == "" ||
			utf8.RuneCountInString(in.Element.InitialValue) > maxInputInitial || in.Element.MaxLength > maxInputInitial {
			return apiError("invalid_arguments")
		}
	}
	if inputs > 0 && (v.Submit == nil || !textOK(v.Submit, maxViewTitle)) {
		return apiError("invalid_arguments") // a modal with inputs needs a submit button
	}
	view := View{
		ID: fmt.Sprintf("V%06d", len(s.views)+1), TriggerID: p.Get("trigger_id"),
		CallbackID: v.CallbackID, PrivateMetadata: v.PrivateMetadata, Title: v.Title.Text, Blocks: v.Blocks,
	}
	s.views = append(s.views, view)
	return map[string]any{"ok": true, "view": map[string]any{
		"id": view.ID, "type": "modal", "callback_id": view.CallbackID, "private_metadata": view.PrivateMetadata,
		"team_id": TeamID, "blocks": json.RawMessage(view.Blocks),
	}}
}

// inputElementOK accepts the input elements brain's modals use: a
// plain_text_input, and a number_input, which must say is_decimal_allowed.
func inputElementOK(typ string, decimal *bool) bool {
	return typ == "plain_text_input" || (typ == "number_input" && decimal != nil)
}

// conversationsOpenLocked answers conversations.open for one user: the DM
// channel with them.
func (s *Server) conversationsOpenLocked(p url.Values) map[string]any {
	users := p.Get("users")
	if users == "" || !validUser(users) {
		return apiError("user_not_found")
	}
	return map[string]any{"ok": true, "channel": map[string]any{"id": DMChannel(users), "is_im": true}}
}

func validUser(s string) bool {
	if len(s) < 2 || (s[0] != 'U' && s[0] != 'W') {
		return false
	}
	for _, r := range s[1:] {
		if (r < 'A' || r > 'Z') && (r < '0' || r > '9') {
			return false
		}
	}
	return true
}
