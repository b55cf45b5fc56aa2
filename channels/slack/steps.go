package slack

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"

	"github.com/slack-go/slack"

	"brain/engine"
)

// ActionStop is the Stop button of the status message, for apps without
// Slack's agent view (which has its own Stop).
const ActionStop = "brain_stop"

// maxStepText bounds a step's one-line summary.
const maxStepText = 120

// toolStarted is the task update of a tool call that began. It names the
// tool only: arguments may hold secrets and are never shown.
func toolStarted(c engine.ToolCall) slack.StreamChunk {
	t := slack.NewTaskUpdateChunk(c.ID, c.Name)
	t.Status = slack.TaskCardStatusInProgress
	return t
}

// toolEnded is the task update of a finished call, with the first line of
// its result (the engine scrubbed it) as the summary.
func toolEnded(r engine.ToolCallResult) slack.StreamChunk {
	t := slack.NewTaskUpdateChunk(r.CallID, r.Name)
	t.Status = slack.TaskCardStatusComplete
	if r.Result.IsError {
		t.Status = slack.TaskCardStatusError
	}
	text := r.Result.Text()
	var s string
	if json.Unmarshal([]byte(text), &s) == nil {
		text = s // a JSON string result shows as its text
	}
	first, _, _ := strings.Cut(strings.TrimSpace(text), "\n")
	t.Output = truncate(first, maxStepText)
	return t
}

// planChunks render a plan: its title, then one task per step.
func planChunks(p engine.PlanUpdated) []slack.StreamChunk {
	out := []slack.StreamChunk{slack.NewPlanUpdateChunk("Plan")}
	for i, st := range p.Steps {
		t := slack.NewTaskUpdateChunk("plan_"+strconv.Itoa(i), truncate(st.Content, maxStepText))
		switch st.Status {
		case engine.PlanInProgress:
			t.Status = slack.TaskCardStatusInProgress
		case engine.PlanCompleted:
			t.Status = slack.TaskCardStatusComplete
		case engine.PlanCanceled:
			t.Status = slack.TaskCardStatusError
		default:
			t.Status = slack.TaskCardStatusPending
		}
		out = append(out, t)
	}
	return out
}

// agentView tells whether the team's app has Slack's agent view: the
// first refused agents.sessions.setStatus says it has not, for good.
func (p *Poster) agentView(team string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return !p.noAgent[team]
}

// turnBegins marks the agent session processing (Slack then shows its Stop
// button) or, without the agent view, posts a status message with a Stop
// button that only the session's person or an approver may use.
func (r *Renderer) turnBegins(ctx context.Context, s engine.Session, team, channel, threadTS string) error {
	if r.Poster.agentView(team) {
		err := r.Poster.SetAgentStatus(ctx, channel, threadTS, AgentProcessing)
		var refused slack.SlackErrorResponse
		if !errors.As(err, &refused) {
			return err
		}
		r.Poster.mu.Lock()
		r.Poster.noAgent[team] = true
		r.Poster.mu.Unlock()
	}
	v, err := encodeValue(ButtonValue{Session: s.ID})
	if err != nil {
		return err
	}
	text := ":hourglass_flowing_sand: Working on it…"
	ts, err := r.Poster.post(ctx, channel, slack.MsgOptionTS(threadTS), slack.MsgOptionText(text, false),
		slack.MsgOptionBlocks(section(r.Poster.blockID("working"), text),
			slack.NewActionBlock(r.Poster.blockID("stop"),
				slack.NewButtonBlockElement(ActionStop, v, plain("Stop")).WithStyle(slack.StyleDanger))))
	if err != nil {
		return err
	}
	r.Poster.mu.Lock()
	r.Poster.stopCards[s.ID] = ts
	r.Poster.mu.Unlock()
	return nil
}

// turnEnds sets the agent session back to active, or removes the Stop
// message.
func (r *Renderer) turnEnds(ctx context.Context, s engine.Session, team, channel, threadTS string) error {
	r.Poster.mu.Lock()
	ts, card := r.Poster.stopCards[s.ID]
	delete(r.Poster.stopCards, s.ID)
	r.Poster.mu.Unlock()
	if card {
		return r.Poster.do(ctx, channel, func(ctx context.Context) error {
			return r.Poster.call(ctx, channel, func(ctx context.Context) error {
				_, _, err := r.Poster.api.DeleteMessageContext(ctx, channel, ts)
				return err
			})
		})
	}
	if !r.Poster.agentView(team) {
		return nil
	}
	err := r.Poster.SetAgentStatus(ctx, channel, threadTS, AgentActive)
	var refused slack.SlackErrorResponse
	if errors.As(err, &refused) {
		return nil
	}
	return err
}
