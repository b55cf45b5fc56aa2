package slackbridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"

	"brain/channels/slack"
	"brain/engine"
	"brain/store"
	"brain/tools"
	"brain/webhooks/slackhook"
)

// Code channels (slack.code_channels, docs/slack.md#code-channels). When a
// Slack session starts a coding task, brain asks Slack for a code channel
// for it and the same session lives there from then on: its replies,
// questions and approval cards are posted in the channel (not in a
// thread), every message in the channel is its input, and the channel's
// status, context bar and diff view follow the work. The rule that opens
// one is the first call of the session that clones a repository in the
// sandbox (sandbox_exec running git clone) or proposes a change
// (github_propose_change).
//
// The decision is made while delivering the session's events, which run
// in order behind a durable cursor: the call that starts coding is
// delivered again after a crash, and the creation carries the session id,
// which Slack makes idempotent, so a crash after Slack created the
// channel and before brain stored it finds the same channel. A workspace
// that refuses code channels (missing_scope, not_allowed, unknown_method,
// ...) is recorded per session, so brain does not ask again for it, and
// the session stays in its thread.

// Tools whose calls start coding.
const (
	toolSandbox = "sandbox_exec"
	toolPropose = "github_propose_change"
)

// reClone finds a git clone in a shell command and the repository it
// clones: an https URL, or host:owner/name.
var reClone = regexp.MustCompile(`\bgit\s[^;&|\n]*?\bclone\s[^;&|\n]*?(?:https?://(?:[^@/\s]+@)?([A-Za-z0-9.-]+)/|git@([A-Za-z0-9.-]+):)([\w.-]+)/([\w.-]+?)(?:\.git)?(?:[\s/;&|]|$)`)

// codeChannels routes Slack sessions that moved to a code channel.
type codeChannels struct {
	b       *Bridge
	enabled bool
	archive bool
	// refusedLogged makes the first refusal of a process a warning and the
	// others debug lines: the operator learns it once.
	refusedLogged atomic.Bool

	mu sync.Mutex
	// opened is the turn in which each session moved (this process): its
	// end still clears the thread's progress.
	opened map[string]string
}

func newCodeChannels(b *Bridge) *codeChannels {
	return &codeChannels{b: b, enabled: b.cfg.CodeChannels.Enabled, archive: b.cfg.ArchivesCodeChannels(), opened: map[string]string{}}
}

// contextBar is the context bar brain keeps for a channel
// (store.CodeChannel.Context): the items in order, and whether the pull
// request is open.
type contextBar struct {
	Repo     *slack.ContextItem `json:"repo,omitempty"`
	Branch   *slack.ContextItem `json:"branch,omitempty"`
	PR       *slack.ContextItem `json:"pr,omitempty"`
	Checks   *slack.ContextItem `json:"checks,omitempty"`
	PROpened bool               `json:"pr_opened,omitempty"`
}

func (c contextBar) items() []slack.ContextItem {
	var out []slack.ContextItem
	for _, it := range []*slack.ContextItem{c.Repo, c.Branch, c.PR, c.Checks} {
		if it != nil {
			out = append(out, *it)
		}
	}
	return out
}

// Render delivers one event of s: in its code channel when it has one (or
// this event opens one), else in its thread.
func (c *codeChannels) Render(ctx context.Context, s engine.Session, ev engine.Event) error {
	if !c.enabled {
		return c.b.renderer.Render(ctx, s, ev)
	}
	cc, ok, err := c.b.store.CodeChannel(ctx, s.ID)
	if err != nil {
		return err
	}
	payload, _ := ev.Decode()
	if !ok {
		call, isCall := payload.(engine.ToolCall)
		name, starts := startsCoding(call)
		if !isCall || !starts {
			return c.b.renderer.Render(ctx, s, ev)
		}
		if cc, err = c.open(ctx, s, name); err != nil {
			return err
		}
		c.mu.Lock()
		c.opened[s.ID] = ev.TurnID
		c.mu.Unlock()
	}
	if cc.State == store.CodeChannelOpening {
		if cc, err = c.link(ctx, cc); err != nil {
			return err
		}
	}
	if cc.State != store.CodeChannelOpen {
		// Refused, or archived: the session is back in its thread.
		return c.b.renderer.Render(ctx, s, ev)
	}
	err = c.render(ctx, s, cc, ev, payload)
	if !slack.IsArchived(err) {
		return err
	}
	// Someone archived the channel: the session goes back to its thread,
	// with this event.
	c.b.log.Info("slack code channel archived in Slack; the session is back in its thread", tools.LogSession, s.ID, tools.LogSlackChan, cc.Channel)
	cc.State = store.CodeChannelArchived
	if err := c.b.store.SetCodeChannel(ctx, c.b.now(), cc); err != nil {
		return err
	}
	return c.b.renderer.Render(ctx, s, ev)
}

// startsCoding reports whether call starts a coding task, and a name for
// the channel.
func startsCoding(call engine.ToolCall) (string, bool) {
	switch call.Name {
	case toolPropose:
		var in struct {
			Repo, Title string
		}
		_ = json.Unmarshal(call.Input, &in)
		return strings.TrimSpace(in.Repo + ": " + in.Title), true
	case toolSandbox:
		var in struct{ Command string }
		_ = json.Unmarshal(call.Input, &in)
		if m := reClone.FindStringSubmatch(in.Command); m != nil {
			return "work on " + m[3] + "/" + m[4], true
		}
	}
	return "", false
}

// open creates the session's code channel, or records that the workspace
// has none.
func (c *codeChannels) open(ctx context.Context, s engine.Session, name string) (store.CodeChannel, error) {
	th, ok := slack.ParseThread(s.ThreadKey)
	cc := store.CodeChannel{SessionID: s.ID, Team: th.Team, Origin: s.ThreadKey, State: store.CodeChannelUnavailable}
	// A DM, the Home tab or a modal is no channel a code channel can
	// start from: the session stays where it is.
	if !ok || th.TS == "" || !strings.HasPrefix(th.Channel, "C") && !strings.HasPrefix(th.Channel, "G") {
		return cc, c.b.store.SetCodeChannel(ctx, c.b.now(), cc)
	}
	if name == "" || name == ":" {
		name = "brain coding task"
	}
	id, err := c.b.poster.CreateCodeChannel(ctx, name, th.Channel, th.TS, s.ID)
	switch {
	case err != nil && slack.CodeChannelsRefused(err):
		log := c.b.log.Debug
		if c.refusedLogged.CompareAndSwap(false, true) {
			log = c.b.log.Warn
		}
		log("slack code channels unavailable: sessions stay in their threads (check the code_channels:manage scope)", tools.LogSession, s.ID, tools.LogErr, err)
		return cc, c.b.store.SetCodeChannel(ctx, c.b.now(), cc)
	case err != nil:
		return cc, err // delivered again; the same session id finds the same channel
	}
	cc.Channel, cc.State, cc.Context = id, store.CodeChannelOpening, "{}"
	if err := c.b.store.SetCodeChannel(ctx, c.b.now(), cc); err != nil {
		return cc, err
	}
	c.b.log.Info("slack code channel opened", tools.LogSession, s.ID, tools.LogSlackChan, id)
	return cc, nil
}

// link posts the channel's link in the thread the session started in,
// then marks the channel open.
func (c *codeChannels) link(ctx context.Context, cc store.CodeChannel) (store.CodeChannel, error) {
	th, _ := slack.ParseThread(cc.Origin)
	text := fmt.Sprintf(":arrow_right: This task continues in <#%s>: replies, questions, approvals and the diff are there.", cc.Channel)
	if _, err := c.b.poster.Reply(ctx, th.Channel, th.TS, text); err != nil {
		return cc, err
	}
	cc.State = store.CodeChannelOpen
	return cc, c.b.store.SetCodeChannel(ctx, c.b.now(), cc)
}

// render delivers an event of a session living in its code channel.
func (c *codeChannels) render(ctx context.Context, s engine.Session, cc store.CodeChannel, ev engine.Event, payload engine.Payload) error {
	origin := s
	s.ThreadKey = slack.Thread{Team: cc.Team, Channel: cc.Channel}.Key() // no ts: the channel itself
	// Replies are posted once, as recorded, not streamed: a stream needs a
	// thread.
	r := *c.b.renderer
	r.Live = nil
	var bar contextBar
	_ = json.Unmarshal([]byte(cc.Context), &bar)
	switch d := payload.(type) {
	case engine.TurnStarted:
		return c.status(ctx, cc, slack.AgentProcessing)
	case engine.TurnCompleted:
		c.mu.Lock()
		turn, moved := c.opened[origin.ID]
		c.mu.Unlock()
		if moved && turn == ev.TurnID {
			// The turn began in the thread: end its progress there.
			if err := c.b.renderer.Render(ctx, origin, ev); err != nil {
				return err
			}
			c.mu.Lock()
			delete(c.opened, origin.ID)
			c.mu.Unlock()
		} else if c.b.live != nil {
			c.b.live.End(ctx, origin, ev.TurnID)
		}
		return c.status(ctx, cc, slack.AgentActive)
	case engine.ToolCall:
		if next, changed := bar.called(d); changed {
			return c.setBar(ctx, cc, next)
		}
		return nil
	case engine.ToolProgress, engine.ToolCallResult, engine.PlanUpdated:
		return nil // the channel's status says it works
	case engine.ApprovalRequested:
		if d.Tool == toolPropose {
			if err := c.diffView(ctx, cc, d); err != nil {
				return err
			}
		}
		return r.Render(ctx, s, ev)
	case engine.ApplySucceeded:
		if err := r.Render(ctx, s, ev); err != nil && !slack.IsArchived(err) {
			return err
		}
		if d.Tool != toolPropose {
			return nil
		}
		next := bar.applied(d)
		if err := c.setBar(ctx, cc, next); err != nil && !slack.IsArchived(err) {
			return err
		}
		cc.Context = mustJSON(next)
		if !c.archive || next.PR == nil {
			return nil
		}
		return c.close(ctx, cc, next)
	}
	return r.Render(ctx, s, ev)
}

// status sets the channel's session status; a workspace that refuses it
// leaves the channel without one.
func (c *codeChannels) status(ctx context.Context, cc store.CodeChannel, status string) error {
	err := c.b.poster.SetAgentStatus(ctx, cc.Channel, "", status)
	if err != nil && slack.CodeChannelsRefused(err) {
		c.b.log.Debug("slack code channel status refused", tools.LogSlackChan, cc.Channel, tools.LogErr, err)
		return nil
	}
	return err
}

// setBar sends the context bar when it changed and records it.
func (c *codeChannels) setBar(ctx context.Context, cc store.CodeChannel, bar contextBar) error {
	next := mustJSON(bar)
	if next == cc.Context {
		return nil
	}
	if err := c.b.poster.SetContextBar(ctx, cc.Channel, bar.items()); err != nil {
		if !slack.CodeChannelsRefused(err) || slack.IsArchived(err) {
			return err
		}
		c.b.log.Warn("slack code channel context bar refused", tools.LogSlackChan, cc.Channel, tools.LogErr, err)
	}
	cc.Context = next
	return c.b.store.SetCodeChannel(ctx, c.b.now(), cc)
}

// diffView shows the proposed change's diff (the card's Detail, from its
// first "diff --git") as the channel's diff view.
func (c *codeChannels) diffView(ctx context.Context, cc store.CodeChannel, d engine.ApprovalRequested) error {
	a, err := c.b.eng.Approval(ctx, d.ApprovalID)
	if err != nil {
		return err
	}
	i := strings.Index(a.Card.Detail, "diff --git ")
	if i < 0 {
		return nil
	}
	var in struct{ Base string }
	_ = json.Unmarshal(d.Input, &in)
	err = c.b.poster.SetDiffView(ctx, cc.Channel, a.Card.Detail[i:], in.Base, "")
	if err != nil && slack.CodeChannelsRefused(err) {
		c.b.log.Warn("slack code channel diff view refused", tools.LogSlackChan, cc.Channel, tools.LogErr, err)
		return nil
	}
	return err
}

// close posts a summary, archives the channel (Slack shares the summary
// back in the origin thread) and moves the session back to its thread:
// the change left brain, so the task is done.
func (c *codeChannels) close(ctx context.Context, cc store.CodeChannel, bar contextBar) error {
	text := fmt.Sprintf(":white_check_mark: Pull request opened: <%s|%s>. This channel is archived; reply in the original thread to continue.", bar.PR.URL, slack.Escape(bar.PR.Label))
	posted, err := c.b.poster.Reply(ctx, cc.Channel, "", text)
	if err != nil && !slack.IsArchived(err) {
		return err
	}
	summary := ""
	if len(posted) > 0 {
		summary = posted[0]
	}
	if err := c.status(ctx, cc, slack.AgentClosed); err != nil && !slack.IsArchived(err) {
		return err
	}
	if err := c.b.poster.ArchiveCodeChannel(ctx, cc.Channel, summary); err != nil && !slack.CodeChannelsRefused(err) {
		return err
	}
	cc.State = store.CodeChannelArchived
	return c.b.store.SetCodeChannel(ctx, c.b.now(), cc)
}

// called updates the bar for a tool call: the repository a clone or a
// proposal names, the base branch of a proposal.
func (bar contextBar) called(call engine.ToolCall) (contextBar, bool) {
	next := bar
	switch call.Name {
	case toolSandbox:
		var in struct{ Command string }
		_ = json.Unmarshal(call.Input, &in)
		m := reClone.FindStringSubmatch(in.Command)
		if m == nil || bar.Repo != nil {
			return bar, false
		}
		host := m[1] + m[2]
		next.Repo = &slack.ContextItem{Key: "repo", Label: m[3] + "/" + m[4], Icon: "folder", URL: "https://" + host + "/" + m[3] + "/" + m[4]}
	case toolPropose:
		var in struct{ Repo, Base string }
		_ = json.Unmarshal(call.Input, &in)
		if in.Repo == "" {
			return bar, false
		}
		if bar.Repo == nil || bar.Repo.Label != in.Repo {
			next.Repo = &slack.ContextItem{Key: "repo", Label: in.Repo, Icon: "folder"}
		}
		if in.Base != "" {
			next.Branch = &slack.ContextItem{Key: "branch", Label: "into " + in.Base, Icon: "branch"}
		}
	default:
		return bar, false
	}
	return next, mustJSON(next) != mustJSON(bar)
}

// applied updates the bar once a proposal was applied: the branch pushed,
// the pull request, its checks.
func (bar contextBar) applied(d engine.ApplySucceeded) contextBar {
	var out struct {
		Repo, Branch, URL string
		Number            int
	}
	if json.Unmarshal(d.Output, &out) != nil || out.URL == "" {
		return bar
	}
	next := bar
	if next.Repo == nil && out.Repo != "" {
		next.Repo = &slack.ContextItem{Key: "repo", Label: out.Repo, Icon: "folder"}
	}
	if out.Branch != "" {
		label := out.Branch
		if bar.Branch != nil {
			label += " " + strings.Replace(bar.Branch.Label, "into ", "→ ", 1)
		}
		next.Branch = &slack.ContextItem{Key: "branch", Label: label, Icon: "branch"}
	}
	next.PR = &slack.ContextItem{Key: "pr", Label: fmt.Sprintf("Pull request #%d", out.Number), Icon: "link", URL: out.URL}
	next.Checks = &slack.ContextItem{Key: "checks", Label: "Checks", Icon: "terminal", URL: strings.TrimSuffix(out.URL, "/") + "/checks"}
	next.PROpened = true
	return next
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// codeSession returns the session whose code channel m was posted in; ok
// is false for any other channel. Every message there is the session's
// input, mention or not, as Slack's guidance for code channels asks.
func (c *codeChannels) codeSession(ctx context.Context, m slackhook.Message) (engine.Session, bool, error) {
	if !c.enabled || m.ChannelType == "im" {
		return engine.Session{}, false, nil
	}
	cc, ok, err := c.b.store.CodeChannelAt(ctx, m.Team, m.Channel)
	if err != nil || !ok {
		return engine.Session{}, false, err
	}
	s, err := c.b.eng.Session(ctx, cc.SessionID)
	if errors.Is(err, engine.ErrNotFound) {
		return engine.Session{}, false, nil
	}
	return s, err == nil, err
}

// liveSessions is the engine's sessions as the live replies see them: a
// session living in its code channel has no thread to stream in, so a
// turn that starts there is not streamed (its replies are posted once).
type liveSessions struct {
	slack.Sessions
	code *codeChannels
}

func (l liveSessions) Session(ctx context.Context, id string) (engine.Session, error) {
	s, err := l.Sessions.Session(ctx, id)
	if err != nil || !l.code.enabled {
		return s, err
	}
	cc, ok, err := l.code.b.store.CodeChannel(ctx, id)
	if err != nil {
		return s, err
	}
	if ok && cc.State == store.CodeChannelOpen {
		s.ThreadKey = "" // no thread: the live reply leaves it alone
	}
	return s, nil
}
