package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"brain/engine"
	"brain/engine/model/fakemodel"
)

// The shape of TestServe_SIGKILLBurstsRunEveryAcknowledgedInputOnce: the
// first input of each session creates it; the rest arrive in bursts, and
// every burst is cut by a SIGKILL once half of it is acknowledged.
const (
	killSessions = 10
	killInputs   = 500
	killBursts   = 5
	killSenders  = 6
	// Every killToolEvery-th input makes the model call the lookup tool
	// first, so kills also land between a tool call and its result.
	killToolEvery = 4
)

// killInput is one input the test sends, and what the daemon answered.
type killInput struct {
	n       int
	session string
	key     string // the idempotency key it is sent with
	text    string
	ackID   string // the user.message event the daemon acknowledged
}

// killRig is a daemon that the test kills and restarts, with the client
// side of it: an HTTP client that is safe to use from the sender goroutines
// (the daemon helpers call t.Fatal) and counts of what happened.
type killRig struct {
	t      *testing.T
	config string
	addr   string
	d      *daemon
	client *http.Client

	kills    int
	resent   int // inputs sent again after a kill left their answer unknown
	deduped  int // ... that the daemon had recorded before it died
	resumed  int // resume-with-retry calls on stopped sessions
	requeued int // user.message events those resumes queued again
}

// TestServe_SIGKILLBurstsRunEveryAcknowledgedInputOnce sends 500 inputs to
// a real `brain serve` in bursts, SIGKILLs it in the middle of every burst
// and restarts it. After each restart, like a client, it resumes the
// stopped sessions with retry (after every other burst it kills the daemon
// again while the retries run, and resumes again) and sends again, with the
// same idempotency key, every input whose answer a kill swallowed. At the
// end every acknowledged input has run in exactly one completed turn, or
// was reported (a session.error names it) and its retry, followed through
// further kills, ran exactly once; nothing ran twice, no idempotency key
// was recorded twice and no tool call was sent twice.
func TestServe_SIGKILLBurstsRunEveryAcknowledgedInputOnce(t *testing.T) {
	var toolMu sync.Mutex
	toolKeys := map[string]int{}
	toolSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		toolMu.Lock()
		toolKeys[r.Header.Get("Idempotency-Key")]++
		toolMu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"found":true}`)
	}))
	defer toolSrv.Close()

	fake := fakemodel.New(fakemodel.WithRecordLimit(0), fakemodel.WithDefault(fakemodel.Func(killModelStep)))
	defer fake.Close()

	dir := t.TempDir()
	r := &killRig{
		t:      t,
		addr:   freeAddr(t),
		client: &http.Client{Timeout: time.Minute},
	}
	r.config = writeKillConfig(t, dir, r.addr, fake.URL(), toolSrv.URL)
	r.d = startDaemon(t, r.config, r.addr)

	inputs := make([]*killInput, killInputs)
	sessions := make([]string, killSessions)
	for n := range inputs {
		in := &killInput{n: n, key: fmt.Sprintf("kill-%d", n), text: fmt.Sprintf("input %d", n)}
		if n%killToolEvery == 0 {
			in.text += " [tool]"
		}
		inputs[n] = in
	}
	for n := range killSessions {
		in := inputs[n]
		var s apiSession
		if st, err := r.postJSON("/v1/sessions", in.key, map[string]any{"message": in.text}, &s); err != nil || st != http.StatusCreated || s.Event == nil {
			t.Fatalf("create session %d: %d %v", n, st, err)
		}
		sessions[n], in.session, in.ackID = s.ID, s.ID, s.Event.ID
	}
	for _, in := range inputs[killSessions:] {
		in.session = sessions[in.n%killSessions]
	}

	rest := inputs[killSessions:]
	per := len(rest) / killBursts
	for b := range killBursts {
		burst := rest[b*per : (b+1)*per]
		if b == killBursts-1 {
			burst = rest[b*per:]
		}
		lost := r.burst(burst)
		r.restart()
		if r.resumeStopped() > 0 && b%2 == 1 {
			// Kill again while the retried input runs: its retry is
			// reported in turn and retried once more.
			r.kill()
			r.restart()
			r.resumeStopped()
		}
		r.resend(lost)
		r.checkDedupe(inputs[:killSessions], burst)
	}

	// Nothing runs any more; resume what is still stopped (once) and let
	// its retries run.
	r.settle()
	if r.resumeStopped() > 0 {
		r.settle()
	}

	var acked []*killInput
	for _, in := range inputs {
		if in.ackID == "" {
			t.Errorf("input %d was never acknowledged", in.n)
			continue
		}
		acked = append(acked, in)
	}
	history := readKillLog(t, r.d, sessions)
	direct, retried, deepest := history.check(t, acked)
	if retried == 0 {
		t.Errorf("no kill stopped a turn: nothing was reported and retried, so the test proved nothing")
	}

	toolMu.Lock()
	defer toolMu.Unlock()
	for key, n := range toolKeys {
		if n != 1 {
			t.Errorf("tool call %q was sent %d times", key, n)
		}
	}
	t.Logf("acked %d, ran directly %d, reported+retried %d (longest retry chain %d), kills %d, "+
		"resent after a kill %d (already recorded %d), resumes with retry %d (inputs queued again %d), tool calls %d",
		len(acked), direct, retried, deepest, r.kills, r.resent, r.deduped, r.resumed, r.requeued, len(toolKeys))
}

// killModelStep answers every model request quickly: a lookup call for an
// input marked [tool], then text once the tool's result is in.
func killModelStep(req fakemodel.Request) fakemodel.Step {
	var msgs []json.RawMessage
	if err := json.Unmarshal(req.Messages, &msgs); err != nil || len(msgs) == 0 {
		return fakemodel.Text("ok")
	}
	last := msgs[len(msgs)-1]
	switch {
	case bytes.Contains(last, []byte(`"tool_result"`)):
		return fakemodel.Text("looked it up")
	case bytes.Contains(last, []byte("[tool]")):
		return fakemodel.ToolCalls(fakemodel.Call{Name: "lookup", Input: `{"q":"thing"}`})
	default:
		return fakemodel.Text("ok")
	}
}

func writeKillConfig(t *testing.T, dir, addr, modelURL, toolURL string) string {
	t.Helper()
	cfg := fmt.Sprintf(`listen: %s
data_dir: %s
log: {level: warn}
models:
  default: {provider: anthropic, model: claude-test, base_url: %s, api_key: test-key, max_retries: 0}
agents:
  - name: default
    instructions: You are a test agent.
    tools: [lookup]
tools:
  http:
    - name: lookup
      description: Look a thing up
      input: {type: object, properties: {q: {type: string}}}
      url: %s/lookup
`, addr, filepath.Join(dir, "data"), modelURL, toolURL)
	path := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// postJSON posts body with an optional Idempotency-Key and decodes a 2xx
// answer into out. It returns transport errors instead of failing the
// test, so senders can use it, and a kill is an error like any other.
func (r *killRig) postJSON(path, key string, body, out any) (int, error) {
	data, err := json.Marshal(body)
	if err != nil {
		return 0, err
	}
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, r.d.base+path, bytes.NewReader(data))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	resp, err := r.client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, err // cut mid-answer: the outcome is unknown
	}
	if resp.StatusCode/100 == 2 && out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			return resp.StatusCode, fmt.Errorf("POST %s: %w: %s", path, err, raw)
		}
	}
	return resp.StatusCode, nil
}

// errUnexpected marks an answer that is neither an acknowledgement nor
// a transport failure.
var errUnexpected = errors.New("unexpected answer")

// sendInput sends in until the daemon acknowledges it, answers 429 (tried
// again) or cannot be reached (returned: the answer is unknown). want is
// the acknowledgement status: 202 for a new input, or 0 to take 200 (the
// daemon recorded it before) as well.
func (r *killRig) sendInput(in *killInput, want int) (int, error) {
	for {
		var ev engine.Event
		st, err := r.postJSON("/v1/sessions/"+in.session+"/events", "",
			map[string]any{"type": engine.EventUserMessage, "text": in.text, "idempotency_key": in.key}, &ev)
		switch {
		case err != nil:
			return 0, err
		case st == http.StatusTooManyRequests:
			time.Sleep(20 * time.Millisecond)
			continue
		case st == http.StatusAccepted || want == 0 && st == http.StatusOK:
			if ev.ID == "" || ev.Type != engine.EventUserMessage {
				return st, fmt.Errorf("%w: %d acknowledges %+v", errUnexpected, st, ev)
			}
			in.ackID = ev.ID
			return st, nil
		default:
			return st, fmt.Errorf("%w: status %d", errUnexpected, st)
		}
	}
}

// burst sends ins from several goroutines at once and SIGKILLs the daemon
// once half of them are acknowledged. It returns the inputs whose answer
// the kill swallowed: each may or may not have been recorded.
func (r *killRig) burst(ins []*killInput) []*killInput {
	r.t.Helper()
	var acked atomic.Int64
	half := make(chan struct{})
	var halfOnce sync.Once
	var mu sync.Mutex
	var lost []*killInput
	work := make(chan *killInput)
	var wg sync.WaitGroup
	for range killSenders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for in := range work {
				_, err := r.sendInput(in, http.StatusAccepted)
				switch {
				case errors.Is(err, errUnexpected):
					r.t.Errorf("input %d: %v", in.n, err)
				case err != nil:
					mu.Lock()
					lost = append(lost, in)
					mu.Unlock()
				default:
					if acked.Add(1) == int64(len(ins)/2) {
						halfOnce.Do(func() { close(half) })
					}
				}
			}
		}()
	}
	go func() {
		defer close(work)
		for _, in := range ins {
			work <- in
		}
	}()
	sent := make(chan struct{})
	go func() { wg.Wait(); close(sent) }()
	select {
	case <-half:
	case <-sent: // every send failed early; kill anyway
	}
	r.kill()
	<-sent
	return lost
}

// kill ends the daemon with SIGKILL: no shutdown code runs.
func (r *killRig) kill() {
	r.t.Helper()
	if err := r.d.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		r.t.Fatal(err)
	}
	_ = r.d.cmd.Wait()
	r.kills++
}

// restart starts the daemon again on the same data; its recovery marks
// the sessions the kill left running interrupted.
func (r *killRig) restart() {
	r.t.Helper()
	r.d = startDaemon(r.t, r.config, r.addr)
}

// resumeStopped resumes every interrupted or failed session with retry,
// as a person pressing Resume would, and returns how many there were.
func (r *killRig) resumeStopped() int {
	r.t.Helper()
	var list struct{ Sessions []engine.Session }
	r.d.get("/v1/sessions?limit=1000&status=interrupted,failed", &list)
	for _, s := range list.Sessions {
		var res struct {
			engine.Session
			Retried []engine.Event `json:"retried"`
		}
		if st := r.d.post("/v1/sessions/"+s.ID+"/resume", map[string]any{"retry": true}, &res); st != http.StatusOK {
			r.t.Fatalf("resume %s with retry: %d", s.ID, st)
		}
		r.resumed++
		r.requeued += len(res.Retried)
	}
	return len(list.Sessions)
}

// resend sends again, with the same idempotency keys, the inputs whose
// answer a kill swallowed, as a client does: an input the daemon recorded
// before it died is answered 200 with its original event.
func (r *killRig) resend(lost []*killInput) {
	r.t.Helper()
	for _, in := range lost {
		st, err := r.sendInput(in, 0)
		if err != nil {
			r.t.Fatalf("resend input %d: %v", in.n, err)
		}
		r.resent++
		if st == http.StatusOK {
			r.deduped++
		}
	}
}

// checkDedupe sends a few acknowledged inputs again after a restart: each
// is answered 200 with the event recorded the first time.
func (r *killRig) checkDedupe(created, burst []*killInput) {
	r.t.Helper()
	for _, in := range created[:2] {
		var s apiSession
		st, err := r.postJSON("/v1/sessions", in.key, map[string]any{"message": in.text}, &s)
		if err != nil || st != http.StatusOK || s.ID != in.session || s.Event == nil || s.Event.ID != in.ackID {
			r.t.Errorf("create session again with key %s: %d %v %s %+v, want 200 %s %s", in.key, st, err, s.ID, s.Event, in.session, in.ackID)
		}
	}
	checked := 0
	for _, in := range burst {
		if in.ackID == "" || checked == 3 {
			continue
		}
		checked++
		first := in.ackID
		st, err := r.sendInput(in, 0)
		if err != nil || st != http.StatusOK || in.ackID != first {
			r.t.Errorf("input %d sent again: %d %v %s, want 200 %s", in.n, st, err, in.ackID, first)
		}
		in.ackID = first
	}
}

// settle waits until no session runs a turn or has input queued for one.
func (r *killRig) settle() {
	r.t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for {
		busy := ""
		var list struct{ Sessions []engine.Session }
		r.d.get("/v1/sessions?limit=1000", &list)
		for _, s := range list.Sessions {
			if s.Status == engine.StatusRunning {
				busy = s.ID + " is running"
				break
			}
			if s.Status != engine.StatusIdle {
				continue
			}
			var page struct{ Events []engine.Event }
			r.d.get(fmt.Sprintf("/v1/sessions/%s/events?after=%d", s.ID, s.InputCursor), &page)
			if countTypes(page.Events, engine.EventUserMessage) > 0 {
				busy = s.ID + " has queued input"
				break
			}
		}
		if busy == "" {
			return
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("not settled: %s", busy)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// killLog is what the sessions' event logs say about their inputs.
type killLog struct {
	inputs    map[string]engine.Input // user.message id -> its payload
	sessionOf map[string]string       // user.message id -> its session
	started   map[string][]string     // user.message id -> the turns that took it
	completed map[string]bool         // turn id -> ended with outcome completed
	reported  map[string]bool         // user.message id -> a session.error in its session names it
	retries   map[string][]string     // user.message id -> the user.message events retrying it
	byKey     map[string][]string     // idempotency key -> user.message ids
}

func readKillLog(t *testing.T, d *daemon, sessions []string) *killLog {
	t.Helper()
	l := &killLog{
		inputs: map[string]engine.Input{}, sessionOf: map[string]string{}, started: map[string][]string{},
		completed: map[string]bool{}, reported: map[string]bool{}, retries: map[string][]string{},
		byKey: map[string][]string{},
	}
	type report struct{ session, input string }
	var reports []report
	for _, sid := range sessions {
		for _, ev := range allEvents(d, sid) {
			p, err := ev.Decode()
			if err != nil {
				t.Fatalf("session %s event %d: %v", sid, ev.Seq, err)
			}
			switch p := p.(type) {
			case engine.Input:
				l.inputs[ev.ID], l.sessionOf[ev.ID] = p, sid
				if p.IdempotencyKey != "" {
					l.byKey[p.IdempotencyKey] = append(l.byKey[p.IdempotencyKey], ev.ID)
				}
				if p.RetryOf != "" {
					l.retries[p.RetryOf] = append(l.retries[p.RetryOf], ev.ID)
				}
			case engine.TurnStarted:
				for _, id := range p.InputIDs {
					l.started[id] = append(l.started[id], ev.TurnID)
				}
			case engine.TurnCompleted:
				if p.Outcome == engine.OutcomeCompleted {
					l.completed[ev.TurnID] = true
				}
			case engine.SessionError:
				reports = append(reports, report{sid, p.InputID})
			}
		}
	}
	for _, rep := range reports {
		if l.sessionOf[rep.input] == rep.session {
			l.reported[rep.input] = true
		}
	}
	return l
}

// allEvents reads a session's whole log, page by page.
func allEvents(d *daemon, id string) []engine.Event {
	d.t.Helper()
	var out []engine.Event
	var after int64
	for {
		var page struct{ Events []engine.Event }
		d.get(fmt.Sprintf("/v1/sessions/%s/events?after=%d&limit=1000", id, after), &page)
		if len(page.Events) == 0 {
			return out
		}
		out = append(out, page.Events...)
		after = page.Events[len(page.Events)-1].Seq
	}
}

// ran reports how many completed turns took the input.
func (l *killLog) ran(id string) int {
	n := 0
	for _, turn := range l.started[id] {
		if l.completed[turn] {
			n++
		}
	}
	return n
}

// check asserts that every acknowledged input ran exactly once, itself or
// through its chain of retries, and that no input or idempotency key was
// recorded twice. It returns how many ran directly, how many through
// retries, and the longest retry chain.
func (l *killLog) check(t *testing.T, acked []*killInput) (direct, retried, deepest int) {
	t.Helper()
	ackedIDs := map[string]bool{}
	for _, in := range acked {
		ackedIDs[in.ackID] = true
		if l.sessionOf[in.ackID] != in.session {
			t.Errorf("input %d: acknowledged as %s, which is not in session %s's log", in.n, in.ackID, in.session)
			continue
		}
		// Walk the input's retries, and theirs, level by level; every
		// retry is followed, so one that should not exist still counts.
		runs, depth := 0, 0
		for ids := []string{in.ackID}; len(ids) > 0; depth++ {
			var next []string
			for _, id := range ids {
				if n := len(l.started[id]); n > 1 {
					t.Errorf("input %d: %s was taken into %d turns", in.n, id, n)
				}
				ran, rs := l.ran(id), l.retries[id]
				runs += ran
				next = append(next, rs...)
				switch {
				case len(rs) > 1:
					t.Errorf("input %d: %s was retried %d times: %v", in.n, id, len(rs), rs)
				case ran > 0 && len(rs) > 0:
					t.Errorf("input %d: %s ran and was retried too (%s)", in.n, id, rs[0])
				case ran > 0:
				case !l.reported[id]:
					t.Errorf("input %d: %s did not run and no session.error names it", in.n, id)
				case len(rs) == 0:
					t.Errorf("input %d: %s was reported but never retried", in.n, id)
				}
			}
			ids = next
		}
		switch {
		case runs != 1:
			t.Errorf("input %d (%s): ran %d times, itself and its retries", in.n, in.ackID, runs)
		case depth == 1:
			direct++
		default:
			retried++
			deepest = max(deepest, depth-1)
		}
	}
	for id, in := range l.inputs {
		if in.RetryOf == "" && !ackedIDs[id] {
			t.Errorf("user.message %s (%q, key %q) was recorded but never acknowledged", id, in.Text, in.IdempotencyKey)
		}
	}
	for key, ids := range l.byKey {
		if len(ids) > 1 {
			t.Errorf("idempotency key %q recorded %d times: %v", key, len(ids), ids)
		}
	}
	return direct, retried, deepest
}
