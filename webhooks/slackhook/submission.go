package slackhook

import (
	"encoding/json"
	"fmt"
	"sort"

	"brain/internal/threadkey"
)

// KindSubmission is an Item holding a submitted modal (view_submission).
const KindSubmission = "submission"

// Bounds on what a submission may carry into the inbox.
const (
	maxMetadata    = 3000 // Slack's own limit on private_metadata
	maxInputs      = 20
	maxInputValue  = 3000
	maxCallbackLen = 255
)

// Submission is a modal a person submitted: the callback id and private
// metadata the modal was opened with, and the text of its inputs.
type Submission struct {
	CallbackID string `json:"callback_id"`
	// Metadata is the view's private_metadata, as the opener set it.
	Metadata string `json:"metadata"`
	ViewID   string `json:"view_id"`
	User     string `json:"user"`
	Team     string `json:"team"`
	// Values maps "block_id.action_id" to the input's value.
	Values map[string]string `json:"values,omitempty"`
}

// viewSubmission holds the fields of a view_submission payload we use.
type viewSubmission struct {
	Team struct {
		ID string `json:"id"`
	} `json:"team"`
	User struct {
		ID     string `json:"id"`
		TeamID string `json:"team_id"`
	} `json:"user"`
	View struct {
		ID              string `json:"id"`
		CallbackID      string `json:"callback_id"`
		PrivateMetadata string `json:"private_metadata"`
		State           struct {
			Values map[string]map[string]struct {
				Type  string `json:"type"`
				Value string `json:"value"`
			} `json:"values"`
		} `json:"state"`
	} `json:"view"`
}

// parseSubmission turns a view_submission into an Item, or none when it
// lacks what a decision needs (ids) or carries more than a form of ours
// can (oversized metadata or values are refused, not cut).
func parseSubmission(payload []byte) ([]Item, error) {
	var in viewSubmission
	if err := json.Unmarshal(payload, &in); err != nil {
		return nil, fmt.Errorf("parse slack view_submission: %w", err)
	}
	v := in.View
	team := firstNonEmpty(in.Team.ID, in.User.TeamID)
	if !allValid(team, in.User.ID, v.ID) || v.CallbackID == "" || len(v.CallbackID) > maxCallbackLen || len(v.PrivateMetadata) > maxMetadata {
		return nil, nil
	}
	values := map[string]string{}
	blocks := make([]string, 0, len(v.State.Values))
	for b := range v.State.Values {
		blocks = append(blocks, b)
	}
	sort.Strings(blocks)
	for _, b := range blocks {
		for a, el := range v.State.Values[b] {
			if len(values) == maxInputs || len(el.Value) > maxInputValue || len(b)+len(a) > 2*maxCallbackLen {
				return nil, nil
			}
			values[b+"."+a] = el.Value
		}
	}
	return []Item{{
		DedupeKeys: []string{"view:" + v.ID + ":" + in.User.ID},
		ThreadKey:  threadkey.SlackView(team, in.User.ID),
		Body:       &Submission{CallbackID: v.CallbackID, Metadata: v.PrivateMetadata, ViewID: v.ID, User: in.User.ID, Team: team, Values: values},
	}}, nil
}
