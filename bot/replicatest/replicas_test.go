package replicatest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"brain/channels/slack/slackfake"
	"brain/engine"
	"brain/engine/model/fakemodel"
	"brain/store/postgres"
	"brain/store/postgres/pgtest"
)

// models answers every replica's model calls: a deploy proposal for an
// input marked [deploy <service>], a call that hangs (and is reported on
// slow) for one marked [slow], "ok" otherwise.
type models struct {
	slow chan string   // the input text of each [slow] request
	gate chan struct{} // closed at cleanup: ends the hung requests
}

func (m *models) step(req fakemodel.Request) fakemodel.Step {
	var msgs []json.RawMessage
	if err := json.Unmarshal(req.Messages, &msgs); err != nil || len(msgs) == 0 {
		return fakemodel.Text("ok")
	}
	last := string(msgs[len(msgs)-1])
	switch {
	case strings.Contains(last, `"tool_result"`):
		return fakemodel.Text("proposed")
	case strings.Contains(last, "[slow]"):
		select {
		case m.slow <- last:
		default:
		}
		return fakemodel.Block(m.gate)
	case strings.Contains(last, "[deploy "):
		svc := last[strings.Index(last, "[deploy ")+len("[deploy "):]
		svc = svc[:strings.IndexByte(svc, ']')]
		return fakemodel.ToolCalls(fakemodel.Call{Name: "deploy", Input: fmt.Sprintf(`{"service":%q}`, svc)})
	default:
		return fakemodel.Text("ok")
	}
}

// newModelServer starts the fake model server answering with m.
func newModelServer(t *testing.T, m *models) string {
	t.Helper()
	fake := fakemodel.New(fakemodel.WithRecordLimit(0), fakemodel.WithDefault(fakemodel.Func(m.step)))
	t.Cleanup(fake.Close)
	return fake.URL()
}

// deployments is the deploy tool's endpoint: it counts applies per
// service and decision, and holds the apply of service "hang".
type deployments struct {
	mu        sync.Mutex
	byService map[string]int
	hung      chan struct{} // signalled when the "hang" apply arrives
	gate      chan struct{}
}

func (d *deployments) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var in struct{ Service string }
	raw, _ := io.ReadAll(r.Body)
	_ = json.Unmarshal(raw, &in)
	d.mu.Lock()
	d.byService[in.Service]++
	d.mu.Unlock()
	if in.Service == "hang" {
		select {
		case d.hung <- struct{}{}:
		default:
		}
		<-d.gate
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, `{"deployed":true}`)
}

func (d *deployments) count(svc string) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.byService[svc]
}

// acked is an input a replica acknowledged.
type acked struct {
	session, eventID string
}

// TestReplicas_ThreeServeProcessesOnOnePostgres runs three `brain serve`
// replicas on one database and checks the promises: API messages
// and Slack events sent round-robin (Slack retries to another replica)
// each run once; SSE on one replica sees what another writes; Slack
// replies are delivered once; 50 concurrent decisions over the replicas
// apply once; cancel on one replica stops a turn another runs; a replica SIGKILLed mid-turn and another mid-apply leave
// their work recovered by the survivor (reported, unconfirmed); and the
// schedule firing every second on all three ran each fire time once.
func TestReplicas_ThreeServeProcessesOnOnePostgres(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	bin := buildBrain(t, t.TempDir())

	m := &models{slow: make(chan string, 4), gate: make(chan struct{})}
	fakeURL := newModelServer(t, m)
	deploys := &deployments{byService: map[string]int{}, hung: make(chan struct{}, 1), gate: make(chan struct{})}
	tools := httptest.NewServer(deploys)
	t.Cleanup(tools.Close)
	slack := slackfake.New()
	t.Cleanup(slack.Close)
	// Registered before the replicas, so it runs after they stopped.
	t.Cleanup(func() { close(m.gate); close(deploys.gate) })

	rc := rigConfig{dsn: dsn, modelURL: fakeURL, toolURL: tools.URL, slackURL: slack.URL()}
	reps := []*replica{startReplica(t, bin, "a", rc), startReplica(t, bin, "b", rc), startReplica(t, bin, "c", rc)}
	a, b, c := reps[0], reps[1], reps[2]

	reported := map[string]bool{} // inputs a session.error reports
	// SSE on a follows a session whose input b records.
	var followed apiSession
	a.must("POST", "/v1/sessions", map[string]any{"message": "follow me"}, &followed, "Idempotency-Key", "follow")
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	sse, err := a.follow(ctx, followed.ID)
	if err != nil {
		t.Fatal(err)
	}
	var fromB engine.Event
	b.must("POST", "/v1/sessions/"+followed.ID+"/events", map[string]any{"type": engine.EventUserMessage, "text": "written on b"}, &fromB)
	waitFor(t, "SSE on a to show the event b committed", func() bool { return sse.saw(fromB.ID) })

	// API sessions and messages, round-robin, from several senders.
	const apiSessions, perSession = 9, 4
	var mu sync.Mutex
	var inputs []acked
	var wg sync.WaitGroup
	for n := range apiSessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var s apiSession
			r := reps[n%3]
			if _, err := r.call("POST", "/v1/sessions", map[string]any{"message": fmt.Sprintf("api %d.0", n)}, &s, "Idempotency-Key", fmt.Sprintf("api-%d", n)); err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			inputs = append(inputs, acked{s.ID, s.Event.ID})
			mu.Unlock()
			for i := 1; i < perSession; i++ {
				r := reps[(n+i)%3]
				var ev engine.Event
				for {
					st, err := r.call("POST", "/v1/sessions/"+s.ID+"/events", map[string]any{
						"type": engine.EventUserMessage, "text": fmt.Sprintf("api %d.%d", n, i), "idempotency_key": fmt.Sprintf("api-%d-%d", n, i),
					}, &ev)
					if st == http.StatusTooManyRequests {
						time.Sleep(20 * time.Millisecond)
						continue
					}
					if err != nil {
						t.Error(err)
						return
					}
					break
				}
				mu.Lock()
				inputs = append(inputs, acked{s.ID, ev.ID})
				mu.Unlock()
			}
		}()
	}
	// Slack threads: a mention on one replica, Slack's retry of the same
	// event on the next, then a reply in the thread on the third.
	const threads = 9
	for n := range threads {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ts := fmt.Sprintf("1600000%03d.000100", n)
			mention := map[string]any{"type": "app_mention", "user": "U1", "text": "<@" + slackfake.BotUserID + "> hello " + fmt.Sprint(n), "ts": ts, "channel": "C1", "channel_type": "channel"}
			for i := range 2 {
				if err := reps[(n+i)%3].slackEvent(fmt.Sprintf("EvM%d", n), mention); err != nil {
					t.Error(err)
				}
			}
			reply := map[string]any{"type": "message", "user": "U1", "text": "more " + fmt.Sprint(n), "ts": fmt.Sprintf("1600000%03d.000200", n), "thread_ts": ts, "channel": "C1", "channel_type": "channel"}
			// Wait for the thread's session so the reply continues it.
			if err := waitUntil("slack thread "+ts+" answered", func() bool { return len(slack.Thread("C1", ts)) >= 1 }); err != nil {
				t.Error(err)
				return
			}
			if err := reps[(n+2)%3].slackEvent(fmt.Sprintf("EvR%d", n), reply); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}

	// 50 concurrent decisions on one approval, spread over the replicas.
	race := propose(t, a, "race")
	var approved atomic.Int64
	for i := range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st, _ := reps[i%3].call("POST", "/v1/approvals/"+race+"/decision", map[string]string{"decision": "approve", "by": "tester"}, nil)
			switch st {
			case http.StatusOK:
				approved.Add(1)
			case http.StatusConflict:
			default:
				t.Errorf("decision: status %d", st)
			}
		}()
	}
	wg.Wait()
	if approved.Load() != 1 {
		t.Fatalf("%d decisions recorded, want 1", approved.Load())
	}
	waitFor(t, "the raced approval applied", func() bool { return approvalStatus(t, c, race) == "applied" })
	if n := deploys.count("race"); n != 1 {
		t.Fatalf("the raced approval was applied %d times", n)
	}

	// Every Slack thread is one session whose two inputs ran once each and
	// whose replies were delivered once.
	store := openStore(t, dsn)
	waitFor(t, "the slack replies", func() bool {
		for n := range threads {
			if len(slack.Thread("C1", fmt.Sprintf("1600000%03d.000100", n))) < 2 {
				return false
			}
		}
		return true
	})
	for n := range threads {
		ts := fmt.Sprintf("1600000%03d.000100", n)
		s, err := store.SessionByThread(context.Background(), "slack:"+slackfake.TeamID+":C1:"+ts)
		if err != nil {
			t.Fatalf("thread %s: %v", ts, err)
		}
		waitFor(t, "slack session "+s.ID+" idle", func() bool { return sessionStatus(t, a, s.ID) == "idle" })
		evs := a.events(s.ID)
		if got := countType(evs, engine.EventUserMessage); got != 2 {
			t.Errorf("thread %s: %d inputs recorded, want 2 (mention deduplicated across replicas, reply)", ts, got)
		}
		for _, ev := range ofType(evs, engine.EventUserMessage) {
			inputs = append(inputs, acked{s.ID, ev.ID})
		}
		replies := 0
		for _, msg := range slack.Thread("C1", ts) {
			if msg.Text == "ok" {
				replies++
			}
		}
		if turns := countType(evs, engine.EventTurnCompleted); replies != turns {
			t.Errorf("thread %s: %d replies for %d turns (a delivery ran twice or not at all): %+v", ts, replies, turns, slack.Thread("C1", ts))
		}
	}

	// Cancel on a stops a turn that runs on c.
	var held apiSession
	c.must("POST", "/v1/sessions", map[string]any{"message": "[slow] cancel me"}, &held, "Idempotency-Key", "cancel-me")
	<-m.slow
	var cancelled apiSession
	a.must("POST", "/v1/sessions/"+held.ID+"/cancel", nil, &cancelled)
	if cancelled.Status != "idle" {
		t.Fatalf("cancel on a: session is %s", cancelled.Status)
	}
	inputs = append(inputs, acked{held.ID, held.Event.ID}) // it ran once: in the cancelled turn

	// Let the schedule fire a few times while all three replicas run it.
	waitFor(t, "schedule runs on three replicas", func() bool {
		runs, err := store.Runs(context.Background(), "tick", 0)
		return err == nil && len(runs) >= 4
	})

	// b dies mid-turn, with input queued behind the turn on a.
	var slow apiSession
	b.must("POST", "/v1/sessions", map[string]any{"message": "[slow] work"}, &slow, "Idempotency-Key", "slow")
	<-m.slow
	var queued engine.Event
	a.must("POST", "/v1/sessions/"+slow.ID+"/events", map[string]any{"type": engine.EventUserMessage, "text": "queued behind"}, &queued)
	b.kill()
	waitFor(t, "a to recover b's session", func() bool { return sessionStatus(t, a, slow.ID) == "interrupted" })
	for _, ev := range ofType(a.events(slow.ID), engine.EventSessionError) {
		p, _ := ev.Decode()
		reported[p.(engine.SessionError).InputID] = true
	}
	if !reported[slow.Event.ID] || !reported[queued.ID] {
		t.Fatalf("b's interrupted input and the input queued behind it are not both reported: %v", reported)
	}

	// c dies mid-apply: the approval ends unconfirmed, applied once.
	hang := propose(t, c, "hang")
	c.must("POST", "/v1/approvals/"+hang+"/decision", map[string]string{"decision": "approve", "by": "tester"}, nil)
	<-deploys.hung
	c.kill()
	waitFor(t, "a to mark c's apply unconfirmed", func() bool { return approvalStatus(t, a, hang) == "unconfirmed" })
	if n := deploys.count("hang"); n != 1 {
		t.Fatalf("the apply c died in was sent %d times", n)
	}

	// Every acknowledged input ran exactly once, or was reported.
	waitFor(t, "the API sessions to settle", func() bool {
		for _, in := range inputs {
			if st := sessionStatus(t, a, in.session); st == "running" {
				return false
			}
		}
		return true
	})
	runs := map[string]int{}
	bySession := map[string]bool{}
	for _, in := range inputs {
		bySession[in.session] = true
	}
	for id := range bySession {
		for _, ev := range ofType(a.events(id), engine.EventTurnStarted) {
			p, _ := ev.Decode()
			for _, in := range p.(engine.TurnStarted).InputIDs {
				runs[in]++
			}
		}
	}
	for _, in := range inputs {
		if runs[in.eventID] != 1 && !reported[in.eventID] {
			t.Errorf("input %s of session %s ran %d times", in.eventID, in.session, runs[in.eventID])
		}
	}

	// The schedule fired on three replicas every second: each fire time
	// has one run, with one session whose one input ran once.
	ctxb := context.Background()
	all, err := store.Runs(ctxb, "tick", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) < 4 {
		t.Fatalf("only %d schedule runs", len(all))
	}
	sessions := map[string]bool{}
	fires := map[time.Time]bool{}
	for _, run := range all {
		if fires[run.FireTime] {
			t.Errorf("fire time %s ran twice", run.FireTime)
		}
		fires[run.FireTime] = true
		if run.SessionID == "" {
			continue
		}
		if sessions[run.SessionID] {
			t.Errorf("session %s serves two runs", run.SessionID)
		}
		sessions[run.SessionID] = true
		if n := countType(a.events(run.SessionID), engine.EventUserMessage); n != 1 {
			t.Errorf("run %s: %d inputs in its session", run.FireTime, n)
		}
	}
	scheduled, err := store.Sessions(ctxb, engine.SessionFilter{})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, s := range scheduled {
		if s.Origin == engine.OriginSchedule {
			n++
		}
	}
	if n != len(sessions) {
		t.Errorf("%d schedule sessions for %d runs with sessions", n, len(sessions))
	}
	t.Logf("%d inputs acknowledged (%d reported after the kill), %d schedule runs, %d slack threads", len(inputs), len(reported), len(all), threads)
}

// propose has the model propose deploying svc in a new API session on r
// and returns the pending approval's id.
func propose(t *testing.T, r *replica, svc string) string {
	t.Helper()
	var s apiSession
	r.must("POST", "/v1/sessions", map[string]any{"message": "[deploy " + svc + "]"}, &s, "Idempotency-Key", "deploy-"+svc)
	var id string
	waitFor(t, "the "+svc+" proposal", func() bool {
		var page struct {
			Approvals []engine.Approval `json:"approvals"`
		}
		r.must("GET", "/v1/approvals?status=pending", nil, &page)
		for _, ap := range page.Approvals {
			if ap.SessionID == s.ID {
				id = ap.ID
				return true
			}
		}
		return false
	})
	return id
}

func approvalStatus(t *testing.T, r *replica, id string) string {
	t.Helper()
	var ap engine.Approval
	r.must("GET", "/v1/approvals/"+id, nil, &ap)
	return string(ap.Status)
}

func sessionStatus(t *testing.T, r *replica, id string) string {
	t.Helper()
	var s apiSession
	r.must("GET", "/v1/sessions/"+id, nil, &s)
	return s.Status
}

func openStore(t *testing.T, dsn string) *postgres.Store {
	t.Helper()
	st, err := postgres.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

func countType(evs []engine.Event, typ string) int { return len(ofType(evs, typ)) }

func ofType(evs []engine.Event, typ string) []engine.Event {
	var out []engine.Event
	for _, ev := range evs {
		if ev.Type == typ {
			out = append(out, ev)
		}
	}
	return out
}
