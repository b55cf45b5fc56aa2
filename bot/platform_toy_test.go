package bot

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"brain/bot/bridge"
	"brain/bot/config"
	"brain/bot/schedule"
	"brain/engine"
	"brain/engine/model/fakemodel"
	"brain/internal/startstop"
	"brain/store"
)

// toyPlatform is a third conversation platform written only against the
// contract (Platform, bot/bridge's vocabulary): a POST to /toy/messages
// starts or continues the session of a toy thread, and the replies are
// kept in memory. It is given to the app through Options.Platforms, so
// adding it edits no shared file.
type toyPlatform struct {
	life startstop.Lifecycle
	deps bridge.Deps

	mu      sync.Mutex
	replies map[string][]string // by thread
	posted  []string            // schedule outcomes
}

func newToyPlatform() *toyPlatform { return &toyPlatform{replies: map[string][]string{}} }

const toyOrigin = "toy"

var _ Platform = (*toyPlatform)(nil)

func (p *toyPlatform) Name() string { return toyOrigin }

func (p *toyPlatform) Hooks() bridge.Hooks {
	return bridge.Hooks{Groups: map[string]engine.Groups{"toyteam": toyGroups{}}}
}

func (p *toyPlatform) Connect(d bridge.Deps) error {
	p.deps = d
	return nil
}

func (p *toyPlatform) Routes() []bridge.Route {
	return []bridge.Route{{Pattern: "POST /toy/messages", Handler: http.HandlerFunc(p.message)}}
}

// message takes "thread\ntext" and sends text to the thread's session.
func (p *toyPlatform) message(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	thread, text, _ := strings.Cut(string(body), "\n")
	s, _, err := p.deps.Engine.CreateSession(r.Context(), engine.NewSession{
		Agent: "default", Origin: toyOrigin, ThreadKey: "toy:" + thread, Interactive: true, StartedBy: "toy-user",
	})
	if err == nil {
		_, _, err = p.deps.Engine.Send(r.Context(), s.ID, engine.Input{Text: text, Author: "toy-user"})
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.WriteHeader(http.StatusAccepted)
}

// Render keeps each model reply in its thread.
func (p *toyPlatform) Render(ctx context.Context, s engine.Session, ev engine.Event) error {
	if ev.Type != engine.EventAgentMessage {
		return nil
	}
	d, err := ev.Decode()
	if err != nil {
		return err
	}
	p.mu.Lock()
	p.replies[s.ThreadKey] = append(p.replies[s.ThreadKey], d.(engine.AgentMessage).Text)
	p.mu.Unlock()
	return nil
}

func (p *toyPlatform) Start(ctx context.Context) error {
	return p.life.Start(ctx, func(ctx context.Context) error {
		out := bridge.Deliverer{Engine: p.deps.Engine, Store: p.deps.Store, Origin: toyOrigin, Now: p.deps.Clock,
			Log: p.deps.Log, Renderer: p, Observe: p.deps.ObserveDelivery}
		p.life.Go(out.Run)
		return nil
	})
}

func (p *toyPlatform) Stop(ctx context.Context) error { return p.life.Stop(ctx, func() {}) }

func (p *toyPlatform) Ready(context.Context) error { return nil }

func (p *toyPlatform) Status(ctx context.Context, connection func(context.Context) error) bridge.Section {
	sec := bridge.Section{Title: "Toy", State: "ok"}
	sec.Rows = append(sec.Rows, bridge.Row{Label: "Kind", Value: "a test platform"}, bridge.ConnectionRow(ctx, connection, &sec))
	return sec
}

func (p *toyPlatform) PostOutcome(_ context.Context, s config.ScheduleConfig, _ time.Time, status, outcome string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.posted = append(p.posted, s.Name+": "+status+": "+outcome)
	return nil
}

func (p *toyPlatform) SessionLink(s engine.Session) string {
	return "https://toy.example/" + strings.TrimPrefix(s.ThreadKey, "toy:")
}

func (p *toyPlatform) Warnings() []string { return []string{"toy platform: for tests only"} }

func (p *toyPlatform) thread(key string) []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.replies[key]...)
}

type toyGroups struct{}

func (toyGroups) Members(_ context.Context, entry string) ([]string, error) {
	if entry == "toyteam:ops" {
		return []string{"toy-user"}, nil
	}
	return nil, errors.New("no such toy team")
}

// TestPlatform_ToyNeedsNoSharedEdit: a platform written against the
// contract alone is served as Slack and Linear are: its route is mounted
// on the API, its service started (its deliverer renders the session's
// reply) and stopped, its readiness check and status section shown, its
// sessions filtered and linked in the console, its inbox counted, its
// warning logged, its schedule outcomes posted.
func TestPlatform_ToyNeedsNoSharedEdit(t *testing.T) {
	toy := newToyPlatform()
	ta := newTestApp(t, "", Options{Platforms: []Platform{toy}})
	ta.fake.Push(fakemodel.Text("Hello from the toy thread."))

	status, _, body := ta.do("POST", "/toy/messages", "t1\nhi there")
	if status != http.StatusAccepted {
		t.Fatalf("toy route: %d %s", status, body)
	}
	waitFor(t, "the reply in the toy thread", func() bool {
		r := toy.thread("toy:t1")
		return len(r) == 1 && r[0] == "Hello from the toy thread."
	})

	_, checks := ta.readiness()
	if c, ok := checks[toyOrigin]; !ok || !c.OK {
		t.Fatalf("readiness %+v", checks)
	}
	_, _, page := ta.do("GET", "/status", nil)
	if !strings.Contains(string(page), "Toy") || !strings.Contains(string(page), "a test platform") {
		t.Fatalf("status page has no toy section:\n%s", page)
	}
	_, _, page = ta.do("GET", "/sessions?origin=toy", nil)
	if !strings.Contains(string(page), `href="https://toy.example/t1"`) || !strings.Contains(string(page), `<option selected>toy</option>`) {
		t.Fatalf("sessions page has no toy origin or link:\n%s", page)
	}
	_, _, metrics := ta.do("GET", "/metrics", nil)
	if !strings.Contains(string(metrics), `brain_inbox_depth{source="toy"} 0`) {
		t.Fatal("no inbox depth for the toy platform")
	}
	if !strings.Contains(ta.logs.String(), "toy platform: for tests only") {
		t.Fatal("the toy's warning was not logged")
	}
	run := schedule.Run{Status: store.RunCompleted}
	if err := outcomePosters(ta.app.platforms).PostScheduleOutcome(context.Background(), config.ScheduleConfig{Name: "nightly"}, run, "done"); err != nil {
		t.Fatal(err)
	}
	if toy.posted[0] != "nightly: completed: done" {
		t.Fatalf("posted %v", toy.posted)
	}
	if err := ta.app.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := toy.Start(context.Background()); err != nil { // stopped for good: no error, nothing runs
		t.Fatal(err)
	}
}

// TestPlatform_HooksByKey: the engine's file and group hooks reach the
// platform the file or group belongs to; none configured gives the engine
// nil hooks, as before platforms.
func TestPlatform_HooksByKey(t *testing.T) {
	files, budget, groups := platformHooks([]Platform{newToyPlatform()})
	if files != nil || budget != 0 {
		t.Fatalf("files %v budget %d", files, budget)
	}
	if m, err := groups.Members(context.Background(), "toyteam:ops"); err != nil || len(m) != 1 || m[0] != "toy-user" {
		t.Fatalf("members %v %v", m, err)
	}
	if _, err := groups.Members(context.Background(), "subteam:S1"); err == nil || !strings.Contains(err.Error(), `kind "subteam"`) {
		t.Fatalf("a group of no platform: %v", err)
	}
	if f, b, g := platformHooks(nil); f != nil || b != 0 || g != nil {
		t.Fatal("no platforms gave hooks")
	}
	if _, err := (filesBySource{}).Load(context.Background(), engine.FileRef{Source: "toy", Hash: "h"}); err == nil {
		t.Fatal("a file of no platform loaded")
	}
}
