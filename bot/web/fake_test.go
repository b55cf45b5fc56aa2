package web

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"brain/bot/schedule"
	"brain/engine"
	"brain/engine/enginetest"
	"brain/store"
	"brain/tools"
)

// fakeEngine is an in-memory Engine: sessions, their events and
// approvals, with the calls the console made. Decide follows the
// engine's single-use rule; DecideFunc, when set, answers instead.
type fakeEngine struct {
	// The embedded roles hold CreateSession and Resume, which the
	// console never calls.
	enginetest.Starter
	enginetest.Turns
	mu        sync.Mutex
	sessions  []engine.Session
	events    map[string][]engine.Event
	approvals map[string]engine.Approval
	changed   map[string]chan struct{}
	decisions []engine.Decision
	sent      []engine.Input
	feeds     map[*fakeFeed]bool

	// approvers are each agent's approvers, for MayDecideApproval and
	// StopFor (the engine's rules, in small).
	approvers map[string][]string
	cancels   []string

	DecideFunc func(id string, d engine.Decision) (engine.Approval, error)
}

var _ Engine = (*fakeEngine)(nil)

func newFakeEngine() *fakeEngine {
	return &fakeEngine{events: map[string][]engine.Event{}, approvals: map[string]engine.Approval{}, changed: map[string]chan struct{}{}}
}

var t0 = time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)

func (f *fakeEngine) addSession(s engine.Session) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if s.CreatedAt.IsZero() {
		s.CreatedAt, s.UpdatedAt = t0, t0
	}
	f.sessions = append([]engine.Session{s}, f.sessions...)
}

// appendEvent adds an event with the payload p to session id and wakes
// its watchers.
func (f *fakeEngine) appendEvent(t testing.TB, id string, p engine.Payload) engine.Event {
	t.Helper()
	return f.appendTurnEvent(t, id, "", p)
}

// appendTurnEvent is appendEvent for an event of turn turnID.
func (f *fakeEngine) appendTurnEvent(t testing.TB, id, turnID string, p engine.Payload) engine.Event {
	t.Helper()
	ev, err := engine.NewEvent(p)
	if err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	ev.SessionID, ev.TurnID = id, turnID
	ev.Seq = int64(len(f.events[id]) + 1)
	ev.ID = fmt.Sprintf("ev%d", ev.Seq)
	ev.CreatedAt = t0.Add(time.Duration(ev.Seq) * time.Second)
	f.events[id] = append(f.events[id], ev)
	for i := range f.sessions {
		if f.sessions[i].ID == id {
			f.sessions[i].LastSeq = ev.Seq
			// The running total the stores keep (store.UsageOf).
			f.sessions[i].UsageTotal = f.sessions[i].UsageTotal.Add(store.UsageOf([]engine.Event{ev}))
		}
	}
	if ch, ok := f.changed[id]; ok {
		close(ch)
		delete(f.changed, id)
	}
	return ev
}

func (f *fakeEngine) Stats() engine.Stats { return engine.Stats{RunningTurns: 1, QueuedTurns: 2} }

func (f *fakeEngine) Session(_ context.Context, id string) (engine.Session, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, s := range f.sessions {
		if s.ID == id {
			return s, nil
		}
	}
	return engine.Session{}, engine.Errorf(engine.CodeNotFound, "session %s not found", id)
}

func (f *fakeEngine) Sessions(_ context.Context, sf engine.SessionFilter) ([]engine.Session, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []engine.Session
	for _, s := range f.sessions {
		if len(sf.Statuses) == 0 || s.Status == sf.Statuses[0] {
			out = append(out, s)
		}
	}
	return out, nil
}

func (f *fakeEngine) Events(_ context.Context, id string, after int64, limit int) ([]engine.Event, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []engine.Event
	for _, ev := range f.events[id] {
		if ev.Seq > after && len(out) < limit {
			out = append(out, ev)
		}
	}
	return out, nil
}

func (f *fakeEngine) Changed(id string) <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	ch, ok := f.changed[id]
	if !ok {
		ch = make(chan struct{})
		f.changed[id] = ch
	}
	return ch
}

func (f *fakeEngine) Deltas(id string) DeltaFeed {
	f.mu.Lock()
	defer f.mu.Unlock()
	feed := &fakeFeed{owner: f, session: id, wake: make(chan struct{}, 1)}
	if f.feeds == nil {
		f.feeds = map[*fakeFeed]bool{}
	}
	f.feeds[feed] = true
	return feed
}

// publishDelta hands d to the feeds watching its session, as the engine
// does while a model writes; it reports how many there were.
func (f *fakeEngine) publishDelta(d engine.Delta) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for feed := range f.feeds {
		if feed.session == d.SessionID {
			feed.push(d)
			n++
		}
	}
	return n
}

// watching counts the open delta feeds.
func (f *fakeEngine) watching() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.feeds)
}

// fakeFeed is a DeltaFeed of a fakeEngine.
type fakeFeed struct {
	owner   *fakeEngine
	session string
	mu      sync.Mutex
	buf     []engine.Delta
	wake    chan struct{}
}

func (f *fakeFeed) push(d engine.Delta) {
	f.mu.Lock()
	f.buf = append(f.buf, d)
	f.mu.Unlock()
	select {
	case f.wake <- struct{}{}:
	default:
	}
}

func (f *fakeFeed) Ready() <-chan struct{} { return f.wake }

func (f *fakeFeed) Take() []engine.Delta {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := f.buf
	f.buf = nil
	return out
}

func (f *fakeFeed) Close() {
	f.owner.mu.Lock()
	defer f.owner.mu.Unlock()
	delete(f.owner.feeds, f)
}

func (f *fakeEngine) CreateSessionWithInput(_ context.Context, n engine.NewSession, in engine.Input) (engine.Session, engine.Event, bool, error) {
	s := engine.Session{ID: fmt.Sprintf("ses%d", len(f.sessions)+1), Agent: n.Agent, Origin: n.Origin, StartedBy: n.StartedBy, Interactive: n.Interactive, Status: engine.StatusIdle}
	f.addSession(s)
	f.mu.Lock()
	f.sent = append(f.sent, in)
	f.mu.Unlock()
	return s, engine.Event{}, true, nil
}

func (f *fakeEngine) Send(_ context.Context, id string, in engine.Input) (engine.Event, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sent = append(f.sent, in)
	return engine.Event{}, false, nil
}

func (f *fakeEngine) ResumeWith(ctx context.Context, id string, _ engine.ResumeOptions) (engine.Resumed, error) {
	s, err := f.Session(ctx, id)
	return engine.Resumed{Session: s}, err
}

func (f *fakeEngine) Cancel(ctx context.Context, id string) (engine.Session, error) {
	f.mu.Lock()
	f.cancels = append(f.cancels, id)
	f.mu.Unlock()
	return f.Session(ctx, id)
}

func (f *fakeEngine) MayDecideApproval(ctx context.Context, a engine.Approval, by string) error {
	ss, err := f.Session(ctx, a.SessionID)
	if err != nil {
		return err
	}
	f.mu.Lock()
	approvers := f.approvers[a.Agent]
	f.mu.Unlock()
	if slices.Contains(approvers, by) || (len(approvers) == 0 && by != "" && by == ss.StartedBy) {
		return nil
	}
	return engine.Errorf(engine.CodeForbidden, "%s may not decide this approval", by)
}

// DecidableApprovals is the engine's, in small: the rule applied to
// every pending approval, as the engine checks each row its query finds.
func (f *fakeEngine) DecidableApprovals(ctx context.Context, d engine.Decision, limit int) ([]engine.Approval, error) {
	pending, err := f.Approvals(ctx, engine.ApprovalFilter{Statuses: []engine.ApprovalStatus{engine.ApprovalPending}})
	if err != nil {
		return nil, err
	}
	var out []engine.Approval
	for _, a := range pending {
		if a.VotedBy(d.By) || len(out) == limit {
			continue
		}
		if f.MayDecide(ctx, a.ID, d) == nil {
			out = append(out, a)
		}
	}
	return out, nil
}

func (f *fakeEngine) StopFor(ctx context.Context, id, by string) (engine.Session, bool, error) {
	ss, err := f.Session(ctx, id)
	if err != nil {
		return ss, false, err
	}
	f.mu.Lock()
	approvers := f.approvers[ss.Agent]
	f.mu.Unlock()
	if by == "" || (by != ss.StartedBy && !slices.Contains(approvers, by)) {
		return ss, false, engine.Errorf(engine.CodeForbidden, "only %s, who started the session, or an approver may stop it", ss.StartedBy)
	}
	_, err = f.Cancel(ctx, id)
	return ss, err == nil, err
}

func (f *fakeEngine) Approvals(_ context.Context, af engine.ApprovalFilter) ([]engine.Approval, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []engine.Approval
	for _, a := range f.approvals {
		keep := len(af.Statuses) == 0
		for _, st := range af.Statuses {
			keep = keep || a.Status == st
		}
		if keep && (af.SessionID == "" || a.SessionID == af.SessionID) {
			out = append(out, a)
		}
	}
	return out, nil
}

func (f *fakeEngine) Approval(_ context.Context, id string) (engine.Approval, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	a, ok := f.approvals[id]
	if !ok {
		return engine.Approval{}, engine.Errorf(engine.CodeNotFound, "approval %s not found", id)
	}
	return a, nil
}

func (f *fakeEngine) Decide(_ context.Context, id string, d engine.Decision) (engine.Approval, error) {
	if f.DecideFunc != nil {
		return f.DecideFunc(id, d)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.decisions = append(f.decisions, d)
	a, ok := f.approvals[id]
	if !ok {
		return engine.Approval{}, engine.Errorf(engine.CodeNotFound, "approval %s not found", id)
	}
	if a.Status != engine.ApprovalPending {
		return engine.Approval{}, engine.Errorf(engine.CodeConflict, "approval %s was already decided by %s", id, a.DecidedBy)
	}
	a.Status, a.DecidedBy = engine.ApprovalDenied, d.By
	if d.Approve {
		a.Status = engine.ApprovalApplied
	}
	f.approvals[id] = a
	return a, nil
}

func (f *fakeEngine) Retry(ctx context.Context, id string, d engine.Decision) (engine.Approval, error) {
	return f.Approval(ctx, id)
}

// fakeSchedules is a Schedules with one schedule and its runs.
type fakeSchedules struct {
	mu   sync.Mutex
	runs []string
}

func (f *fakeSchedules) Status(context.Context) ([]schedule.Status, error) {
	next := t0.Add(time.Hour)
	return []schedule.Status{{Name: "digest", Cron: "0 9 * * 1-5", Timezone: "UTC", Agent: "default", Enabled: true, Overlap: "skip",
		NextFire: &next, LastRuns: []schedule.Run{{Schedule: "digest", FireTime: t0, Trigger: "cron", SessionID: "ses-sched", Status: "completed", Outcome: "Posted the digest."}}}}, nil
}

func (f *fakeSchedules) RunNow(_ context.Context, name string) (schedule.Run, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if name != "digest" {
		return schedule.Run{}, engine.Errorf(engine.CodeNotFound, "no schedule %s", name)
	}
	f.runs = append(f.runs, name)
	return schedule.Run{Schedule: name, SessionID: "ses-run", Status: "running"}, nil
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

func (f *fakeEngine) MayDecide(ctx context.Context, id string, d engine.Decision) error {
	a, err := f.Approval(ctx, id)
	if err != nil {
		return err
	}
	ss, err := f.Session(ctx, a.SessionID)
	if err != nil {
		return err
	}
	if d.ViaAPI && (ss.Origin == engine.OriginAPI || ss.Origin == engine.OriginConsole) {
		return nil
	}
	return f.MayDecideApproval(ctx, a, d.By)
}

// ListSessions is store.SessionSearch over the fake's sessions (newest
// first as added), with the store's rules in small: the person who
// started or wrote, every word somewhere in the messages, pages by
// offset in the cursor. The drivers' own are tested by store/storetest.
func (f *fakeEngine) ListSessions(_ context.Context, q store.SessionQuery) ([]engine.Session, string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var match []engine.Session
	for _, s := range f.sessions {
		text := s.Agent + " " + s.StartedBy
		people := map[string]bool{s.StartedBy: true}
		for _, ev := range f.events[s.ID] {
			var m struct{ Text, Author string }
			if (ev.Type == engine.EventUserMessage || ev.Type == engine.EventAgentMessage) && json.Unmarshal(ev.Data, &m) == nil {
				text += " " + m.Author + " " + m.Text
				people[m.Author] = true
			}
		}
		words := store.SearchTerms(text)
		ok := (q.ID == "" || s.ID == q.ID) && (q.Status == "" || s.Status == q.Status) && (q.Origin == "" || s.Origin == q.Origin) &&
			(q.Agent == "" || s.Agent == q.Agent) && (q.Person == "" || people[q.Person])
		for _, t := range store.SearchTerms(q.Text) {
			ok = ok && slices.Contains(words, t)
		}
		if q.Text != "" && len(store.SearchTerms(q.Text)) == 0 {
			ok = false
		}
		if ok {
			match = append(match, s)
		}
	}
	start := 0
	if q.Cursor != "" {
		n, err := strconv.Atoi(q.Cursor)
		if err != nil {
			return nil, "", engine.Errorf(engine.CodeInvalid, "bad cursor")
		}
		start = min(n, len(match))
	}
	end := min(start+q.PageLimit(), len(match))
	next := ""
	if end < len(match) {
		next = strconv.Itoa(end)
	}
	return match[start:end], next, nil
}

// Usage is store.UsageReport over the fake's turn.completed events.
func (f *fakeEngine) Usage(_ context.Context, since, until time.Time) ([]store.UsageRow, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	sums := map[store.UsageRow]*store.UsageRow{}
	var keys []store.UsageRow
	for _, s := range f.sessions {
		for _, ev := range f.events[s.ID] {
			if ev.Type != engine.EventTurnCompleted || ev.CreatedAt.Before(since) || !ev.CreatedAt.Before(until) {
				continue
			}
			var tc engine.TurnCompleted
			if json.Unmarshal(ev.Data, &tc) != nil {
				continue
			}
			k := store.UsageRow{Day: ev.CreatedAt.UTC().Format("2006-01-02"), Agent: s.Agent, Person: s.StartedBy, Origin: s.Origin}
			if sums[k] == nil {
				row := k
				sums[k] = &row
				keys = append(keys, k)
			}
			sums[k].Turns++
			sums[k].Usage = sums[k].Usage.Add(tc.Usage)
		}
	}
	out := make([]store.UsageRow, 0, len(keys))
	for _, k := range keys {
		out = append(out, *sums[k])
	}
	return out, nil
}

// setStatus changes a session's status (the engine would, with its
// session.status event).
func (f *fakeEngine) setStatus(id string, st engine.Status) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := range f.sessions {
		if f.sessions[i].ID == id {
			f.sessions[i].Status = st
		}
	}
}

func toolsCard(title string) tools.Card { return tools.Card{Title: title} }
