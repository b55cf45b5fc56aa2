package slackhook

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"

	"brain/internal/threadkey"
)

// interaction holds the fields of a block_actions payload we use.
type interaction struct {
	Type string `json:"type"`
	Team struct {
		ID string `json:"id"`
	} `json:"team"`
	User struct {
		ID     string `json:"id"`
		TeamID string `json:"team_id"`
	} `json:"user"`
	Channel struct {
		ID string `json:"id"`
	} `json:"channel"`
	View struct {
		Type string `json:"type"`
	} `json:"view"`
	Container struct {
		Type      string `json:"type"`
		MessageTS string `json:"message_ts"`
		ChannelID string `json:"channel_id"`
		ThreadTS  string `json:"thread_ts"`
	} `json:"container"`
	Message struct {
		TS       string `json:"ts"`
		ThreadTS string `json:"thread_ts"`
	} `json:"message"`
	ResponseURL string `json:"response_url"`
	TriggerID   string `json:"trigger_id"`
	Actions     []struct {
		ActionID       string `json:"action_id"`
		BlockID        string `json:"block_id"`
		Value          string `json:"value"`
		ActionTS       string `json:"action_ts"`
		SelectedOption struct {
			Value string `json:"value"`
		} `json:"selected_option"`
	} `json:"actions"`
}

// ParseInteraction parses an interactivity request body: form-encoded with
// the JSON in the "payload" field. block_actions clicks on a message become
// Items (one per action) and a view_submission one KindSubmission Item;
// other interaction types, and clicks in modals or App Home, yield none.
// It never panics.
func ParseInteraction(body []byte) ([]Item, error) {
	form, err := url.ParseQuery(string(body))
	if err != nil {
		return nil, fmt.Errorf("parse slack interaction form: %w", err)
	}
	payload := form.Get("payload")
	if payload == "" {
		return nil, errors.New("parse slack interaction form: no payload")
	}
	return parseInteractionPayload([]byte(payload))
}

// parseInteractionPayload parses the interaction JSON itself, as found in
// the form's payload field or a Socket Mode interactive request.
func parseInteractionPayload(payload []byte) ([]Item, error) {
	var in interaction
	if err := json.Unmarshal(payload, &in); err != nil {
		// Other interaction types may shape these fields differently; only
		// a broken block_actions payload is an error.
		var typeOnly struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(payload, &typeOnly) == nil && typeOnly.Type == "view_submission" {
			return parseSubmission(payload)
		}
		if json.Unmarshal(payload, &typeOnly) == nil && typeOnly.Type != "block_actions" {
			return nil, nil
		}
		return nil, fmt.Errorf("parse slack interaction: %w", err)
	}
	if in.Type == "view_submission" {
		return parseSubmission(payload)
	}
	if in.Type != "block_actions" {
		return nil, nil
	}
	team := firstNonEmpty(in.Team.ID, in.User.TeamID)
	channel := firstNonEmpty(in.Container.ChannelID, in.Channel.ID)
	msgTS := firstNonEmpty(in.Container.MessageTS, in.Message.TS)
	root := firstNonEmpty(in.Container.ThreadTS, in.Message.ThreadTS, msgTS)
	if in.Container.Type == "view" && in.View.Type == "home" {
		return homeClicks(in, team), nil
	}
	if !allValid(team, channel, in.User.ID, msgTS, root) {
		return nil, nil // a modal or App Home click: no thread to act on
	}
	var items []Item
	for _, a := range in.Actions {
		click := firstNonEmpty(a.ActionTS, in.TriggerID)
		if a.ActionID == "" || len(a.ActionID) > 255 || !validID(click) {
			continue
		}
		items = append(items, Item{
			DedupeKeys: []string{"action:" + msgTS + ":" + click + ":" + in.User.ID + ":" + a.ActionID},
			ThreadKey:  threadKey(team, channel, root),
			Body: &Action{
				ActionID:    a.ActionID,
				BlockID:     a.BlockID,
				Value:       firstNonEmpty(a.Value, a.SelectedOption.Value),
				ActionTS:    a.ActionTS,
				User:        in.User.ID,
				Team:        team,
				Channel:     channel,
				MessageTS:   msgTS,
				ThreadTS:    root,
				ResponseURL: in.ResponseURL,
				TriggerID:   in.TriggerID,
			},
		})
	}
	return items, nil
}

// homeClicks turns clicks on the App Home tab into Items keyed by the
// person's Home, since they have no channel or thread.
func homeClicks(in interaction, team string) []Item {
	if !allValid(team, in.User.ID) {
		return nil
	}
	var items []Item
	for _, a := range in.Actions {
		if a.ActionID == "" || len(a.ActionID) > 255 || !validID(a.ActionTS) {
			continue
		}
		items = append(items, Item{
			DedupeKeys: []string{"action:home:" + a.ActionTS + ":" + in.User.ID + ":" + a.ActionID},
			ThreadKey:  threadkey.SlackHome(team, in.User.ID),
			Body: &Action{
				ActionID: a.ActionID, BlockID: a.BlockID, Value: firstNonEmpty(a.Value, a.SelectedOption.Value),
				ActionTS: a.ActionTS, User: in.User.ID, Team: team, TriggerID: in.TriggerID, Home: true,
			},
		})
	}
	return items
}
