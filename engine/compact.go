package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// Compaction makes a session's context fit its model's window again, in
// two steps, each recorded in one context.compacted event (the log itself
// keeps everything):
//
//  1. Large tool results outside the newest round are shortened to their
//     head, biggest first: they are most of the bytes, and the model has
//     already acted on them.
//  2. If that is not enough and the caller allows it, the oldest part of
//     the log, up to a round boundary, is replaced by a summary the model
//     writes (one extra call). A round boundary is a turn's start or the
//     start of a model response, so a tool call is never separated from
//     its result. brain adds to the summary, word for word, what no
//     summary may drop: the last question asked there, the person's
//     latest request, the result tool's latest value and the outcome of
//     every approval requested there.

// compactTarget is the share of the budget a compaction aims for, so the
// rounds that follow have room before the next one.
const compactTarget = 0.6

// Summary sizes: the room a summary is assumed to take when choosing the
// cut, the answer it may write, and how much transcript it reads.
const (
	summaryAllowance   = 6000 // bytes
	summaryMaxTokens   = 1500
	transcriptClipCall = 500
	transcriptClipTool = 1500
)

// summarizeInstructions is the system prompt of the summary call. It is a
// constant, so the call is reproducible and cacheable.
const summarizeInstructions = `You write the working memory of an assistant whose conversation has grown too long for its context window. ` +
	`Summarise the transcript you are given for the assistant itself, who will continue the conversation from your summary alone. ` +
	`Keep: what the person asked for and still expects, decisions made, facts learned from tools (names, ids, numbers, URLs, file paths), ` +
	`what was tried and failed, open questions and commitments. Drop pleasantries and repetition. ` +
	`Write plain text, at most about 600 words. Do not call tools.`

// compaction is one request to compact a session's context.
// systemPrompt is the system prompt the compacted request is sent with.
func (c compaction) systemPrompt() string {
	if c.system != "" {
		return c.system
	}
	return c.agent.Instructions
}

type compaction struct {
	sessionID string
	turnID    string // "" outside a turn (POST .../compact)
	agent     *Agent
	system    string // the request's system prompt; "" = the agent's instructions
	specs     []ToolSpec
	reason    string
	// target is the size, in tokens, the request should end up under.
	target int
	// summarize allows step 2 (a model call).
	summarize bool
	// guard, when set, checks the session as the compaction is recorded.
	guard func(*Session) error
}

// compactResult is what a compaction did.
type compactResult struct {
	event *ContextCompacted // nil when there was nothing to do
	usage Usage             // of the summary call
	// contextSeq is the session's context checkpoint once it is recorded.
	contextSeq int64
}

// compact runs a compaction and records it. It returns a nil event when
// nothing could be made smaller. Cancelling ctx stops the summary call; a
// summary already written is recorded all the same.
func (e *Engine) compact(ctx context.Context, c compaction) (compactResult, error) {
	wctx := context.WithoutCancel(ctx)
	s, err := e.store.Session(wctx, c.sessionID)
	if err != nil {
		return compactResult{}, fmt.Errorf("compact: %w", err)
	}
	// The context is rebuilt from the events after the checkpoint alone,
	// so that is all a compaction needs to read.
	evs, err := e.store.Events(wctx, c.sessionID, s.ContextSeq, 0)
	if err != nil {
		return compactResult{}, fmt.Errorf("compact: read history: %w", err)
	}
	if len(evs) == 0 {
		return compactResult{contextSeq: s.ContextSeq}, nil
	}
	p := newPlanner(e, c, evs)
	before := p.size(nil)
	plan := ContextCompacted{Reason: c.reason, TokensBefore: before}
	plan.Shortened = p.shorten(c.target)
	after := p.size(&plan)
	res := compactResult{contextSeq: s.ContextSeq}
	// A compaction asked for by a person always summarises.
	if c.summarize && (after > c.target || c.reason == CompactAPI) {
		if cut, ok := p.cut(c.target, plan.Shortened); ok {
			summary, usage, err := e.summarize(ctx, c, p.transcript(cut))
			res.usage = usage
			if err != nil {
				return res, err
			}
			plan.Summary, plan.FromSeq, plan.ToSeq = summary, evs[0].Seq, evs[cut-1].Seq
			plan.Kept = p.kept(cut)
			if p.prev != nil {
				plan.FromSeq = p.prev.FromSeq // the new summary stands for the old one too
			}
			plan.Usage = usage
			after = p.size(&plan)
		}
	}
	if len(plan.Shortened) == 0 && plan.Summary == "" {
		return res, nil
	}
	plan.TokensAfter = after
	recorded, err := e.events(c.turnID, plan)
	if err != nil {
		return res, err
	}
	update := c.guard
	if plan.Summary != "" {
		update = func(s *Session) error {
			if c.guard != nil {
				if err := c.guard(s); err != nil {
					return err
				}
			}
			s.ContextSeq = p.checkpoint(plan, s.InputCursor)
			return nil
		}
	}
	done, err := e.commit(wctx, Commit{SessionID: c.sessionID, Update: update, Events: recorded})
	if err != nil {
		return res, fmt.Errorf("record compaction: %w", err)
	}
	res.contextSeq = done.Session.ContextSeq
	e.count("compactions_" + c.reason)
	res.event = &plan
	return res, nil
}

// planner chooses what a compaction shortens and where its summary ends,
// trying each choice on the real log with buildMessages.
type planner struct {
	e        *Engine
	c        compaction
	evs      []Event
	payloads []Payload
	failed   map[string]bool
	nextSeq  int64
	// prev is the latest summary in evs: evs start at the context
	// checkpoint, so what came before it is known only through prev.
	prev *ContextCompacted
}

func newPlanner(e *Engine, c compaction, evs []Event) *planner {
	p := &planner{e: e, c: c, evs: evs, payloads: make([]Payload, len(evs)), failed: map[string]bool{}}
	for i, ev := range evs {
		p.payloads[i], _ = ev.Decode() // unreadable events are left out, as in buildMessages
		switch pl := p.payloads[i].(type) {
		case TurnCompleted:
			if pl.Outcome == OutcomeFailed {
				p.failed[ev.TurnID] = true
			}
		case ContextCompacted:
			if pl.Summary != "" {
				p.prev = &pl
			}
		}
		p.nextSeq = ev.Seq + 1
	}
	return p
}

// size is the estimated request with the context rebuilt as if plan (nil:
// nothing more) had been recorded.
func (p *planner) size(plan *ContextCompacted) int {
	evs := p.evs
	if plan != nil {
		ev, err := NewEvent(*plan)
		if err == nil {
			ev.Seq, ev.TurnID = p.nextSeq, p.c.turnID
			evs = append(evs[:len(evs):len(evs)], ev)
		}
	}
	msgs, _ := buildMessages(evs)
	return p.e.sizes.estimate(p.c.agent.Name, ModelRequest{System: p.c.systemPrompt(), Messages: msgs, Tools: p.c.specs})
}

// boundaries are the indexes of the round boundaries, oldest first:
// events a summary may stop just before.
func (p *planner) boundaries() []int {
	var out []int
	last := map[string]string{} // turn -> type of its previous event
	// Whether a boundary would have anything before it: the previous
	// summary's turns do, when the events start at the checkpoint.
	content := p.prev != nil
	for i, ev := range p.evs {
		if p.failed[ev.TurnID] {
			continue
		}
		switch ev.Type {
		case EventTurnStarted:
			if content {
				out = append(out, i)
			}
			content = true
		case EventAgentMessage, EventToolCall:
			if prev := last[ev.TurnID]; content && prev != EventAgentMessage && prev != EventToolCall && prev != EventTurnStarted && prev != EventSessionStatus {
				out = append(out, i)
			}
		case EventSessionContext:
			content = true
		}
		if ev.Type != EventToolProgress && ev.Type != EventContextCompacted {
			last[ev.TurnID] = ev.Type
		}
	}
	return out
}

// newestRound is the index where the newest round starts; its results are
// never shortened (the model has not read them yet).
func (p *planner) newestRound() int {
	b := p.boundaries()
	if len(b) == 0 {
		return 0
	}
	return b[len(b)-1]
}

// shorten picks the tool results to cut to their head, biggest first,
// until the estimate is under target.
func (p *planner) shorten(target int) []int64 {
	done := map[int64]bool{}
	for _, pl := range p.payloads {
		if c, ok := pl.(ContextCompacted); ok {
			for _, s := range c.Shortened {
				done[s] = true
			}
		}
	}
	type cand struct {
		seq  int64
		size int
	}
	var cands []cand
	newest := p.newestRound()
	for i := 0; i < newest; i++ {
		r, ok := p.payloads[i].(ToolCallResult)
		if !ok || p.failed[p.evs[i].TurnID] || done[p.evs[i].Seq] {
			continue
		}
		if n := len(r.Result.Text()); n > shortenAbove {
			cands = append(cands, cand{p.evs[i].Seq, n})
		}
	}
	sort.SliceStable(cands, func(a, b int) bool { return cands[a].size > cands[b].size })
	size := p.size(nil)
	factor := p.e.sizes.get(p.c.agent.Name)
	var out []int64
	for _, c := range cands {
		if size <= target {
			break
		}
		out = append(out, c.seq)
		size -= int(float64(c.size-shortenHead) / 3 * factor)
	}
	sort.Slice(out, func(a, b int) bool { return out[a] < out[b] })
	return out
}

// cut chooses where the summary ends: the oldest round boundary after
// which the rest fits under target, or else the newest one (the caller
// then finds whether even that fits). Boundaries at or before an earlier
// summary's end are passed over: there would be nothing new to summarise.
func (p *planner) cut(target int, shortened []int64) (int, bool) {
	var prevEnd int64
	for _, pl := range p.payloads {
		if c, ok := pl.(ContextCompacted); ok && c.Summary != "" {
			prevEnd = c.ToSeq
		}
	}
	var cands []int
	for _, i := range p.boundaries() {
		if p.evs[i-1].Seq > prevEnd {
			cands = append(cands, i)
		}
	}
	if len(cands) == 0 {
		return 0, false
	}
	placeholder := strings.Repeat("x", summaryAllowance)
	fits := func(k int) bool {
		i := cands[k]
		plan := ContextCompacted{Summary: placeholder, FromSeq: p.evs[0].Seq, ToSeq: p.evs[i-1].Seq, Shortened: shortened,
			Kept: p.kept(i)}
		return p.size(&plan) <= target
	}
	// The rest shrinks as the cut moves later, so the first that fits is
	// found by bisection.
	k := sort.Search(len(cands), fits)
	if k == len(cands) {
		k = len(cands) - 1
	}
	return cands[k], true
}

// transcript renders the events before cut for the summary call, within
// the budget: its middle is left out when it is too long.
func (p *planner) transcript(cut int) string {
	msgs, _ := buildMessages(p.evs[:cut])
	var b strings.Builder
	for _, m := range msgs {
		role := "Person"
		if m.Role == RoleAssistant {
			role = "Assistant"
		}
		if m.Text != "" {
			fmt.Fprintf(&b, "%s: %s\n", role, m.Text)
		}
		for _, c := range m.ToolCalls {
			fmt.Fprintf(&b, "Assistant called tool %s with %s\n", c.Name, clip(string(c.Input), transcriptClipCall))
		}
		for _, r := range m.ToolResults {
			kind := "result"
			if r.IsError {
				kind = "error"
			}
			fmt.Fprintf(&b, "Tool %s %s: %s\n", r.Name, kind, clip(r.Content, transcriptClipTool))
		}
	}
	// About target tokens at 3 bytes each, less the summary's room, and
	// never under half of it, so the summary call itself fits.
	room := p.c.target * 3
	return clipMiddle(b.String(), max(room-summaryAllowance, room/2))
}

// clipMiddle keeps the first quarter and the last three quarters of limit
// bytes of s: the start of a conversation and its most recent part.
func clipMiddle(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	head := limit / 4
	tail := limit - head
	return strings.ToValidUTF8(s[:head], "") + fmt.Sprintf("\n[... %d bytes of the transcript left out ...]\n", len(s)-limit) +
		strings.ToValidUTF8(s[len(s)-tail:], "")
}

// summarize asks the agent's model for the summary of transcript.
func (e *Engine) summarize(ctx context.Context, c compaction, transcript string) (string, Usage, error) {
	maxTokens := summaryMaxTokens
	if c.agent.MaxTokens > 0 {
		maxTokens = min(maxTokens, c.agent.MaxTokens)
	}
	resp, err := c.agent.Model.Generate(ctx, ModelRequest{
		System: summarizeInstructions,
		Messages: []Message{{Role: RoleUser, Text: "Transcript of the conversation so far:\n\n" + transcript +
			"\n\nWrite the summary now."}},
		MaxTokens: maxTokens,
		SessionID: c.sessionID,
		TurnID:    c.turnID,
	})
	if err != nil {
		return "", Usage{}, fmt.Errorf("summarize for compaction: %w", err)
	}
	e.count("model_calls")
	summary := strings.TrimSpace(e.scrub.String(resp.Text))
	if summary == "" {
		summary = "(the model wrote no summary; the notes below are what was kept)"
	}
	return summary, resp.Usage, nil
}

// maxKeptApprovals bounds the approval outcomes a summary carries.
const maxKeptApprovals = 20

// How the notes a summary keeps word for word begin, one kind each (an
// approval's note begins with "[approval ID").
const (
	keptRequest  = "The person's latest request: "
	keptQuestion = "The last question you asked: "
	keptResult   = "Your latest result (the result tool's value): "
)

// keptNotes is what a summary of evs carries word for word, from the
// events after seq after (the inputs their turns took may come before).
func keptNotes(evs []Event, payloads []Payload, failed map[string]bool, after int64) []string {
	var (
		question *Question
		request  string
		result   *ResultRecord
		order    []string
		approval = map[string]string{}
	)
	inputs := map[string]Input{}
	for i, pl := range payloads {
		if failed[evs[i].TurnID] {
			continue
		}
		if in, ok := pl.(Input); ok {
			inputs[evs[i].ID] = in
		}
		if evs[i].Seq <= after {
			continue
		}
		switch pl := pl.(type) {
		case TurnStarted:
			for _, id := range pl.InputIDs {
				if in, ok := inputs[id]; ok {
					request = inputMessageText(in)
				}
			}
		case Question:
			question = &pl
		case ResultRecord:
			result = &pl
		case ApprovalRequested:
			order = append(order, pl.ApprovalID)
			approval[pl.ApprovalID] = fmt.Sprintf("[approval %s (%s %q): requested, waiting for a decision]", pl.ApprovalID, pl.Tool, pl.Title)
		case ApprovalDecided, ApplySucceeded, ApplyFailed, ApplyUnconfirmed, ApprovalExpiry:
			id := pl.(ApprovalUpdate).UpdatedApproval()
			if _, ok := approval[id]; !ok {
				order = append(order, id)
			}
			approval[id] = approvalNote(pl)
		}
	}
	var out []string
	if request != "" {
		out = append(out, keptRequest+clip(request, 2000))
	}
	if question != nil {
		q := keptQuestion + question.Text
		if len(question.Options) > 0 {
			labels := make([]string, len(question.Options))
			for i, o := range question.Options {
				labels[i] = fmt.Sprintf("%s (%s)", o.Label, o.Value)
			}
			q += " Options: " + strings.Join(labels, ", ")
		}
		out = append(out, q)
	}
	if result != nil {
		out = append(out, keptResult+clip(string(compactJSON(result.Data)), 4000))
	}
	if len(order) > maxKeptApprovals {
		order = order[len(order)-maxKeptApprovals:]
	}
	for _, id := range order {
		out = append(out, approval[id])
	}
	return out
}

func compactJSON(raw json.RawMessage) []byte {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return raw
	}
	return b.Bytes()
}
