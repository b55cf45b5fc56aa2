package slack

import (
	"context"
	"encoding/json"
	"log/slog"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"brain/channels/slack/slackfake"
)

const (
	testChannel = "C0TEST"
	testThread  = "1690000000.000100"
)

// newPoster starts a fake Slack and a Poster talking to it with the real
// slack-go client; both are closed when the test ends.
func newPoster(t *testing.T, opts ...Option) (*Poster, *slackfake.Server) {
	t.Helper()
	fake := slackfake.New()
	client := slack.New("xoxb-test", slack.OptionAPIURL(fake.URL()+"/api/"))
	p := New(client, slog.New(slog.DiscardHandler), opts...)
	t.Cleanup(func() {
		p.Close()
		fake.Close()
		recordSlack(t, fake)
	})
	return p, fake
}

func testCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// block is the part of a Block Kit block the tests look at.
type block struct {
	Type    string     `json:"type"`
	BlockID string     `json:"block_id"`
	Text    *textField `json:"text"`
	Fields  []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"fields"`
	Elements []struct {
		Type     string `json:"type"`
		ActionID string `json:"action_id"`
		Value    string `json:"value"`
		Style    string `json:"style"`
		Text     any    `json:"text"`
	} `json:"elements"`
}

// textField is a text object, or the plain string of a markdown block.
type textField struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

func (f *textField) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		f.Type = "markdown"
		return json.Unmarshal(b, &f.Text)
	}
	type plainField textField
	return json.Unmarshal(b, (*plainField)(f))
}

type button struct {
	ActionID, Value, Text, Style, BlockID string
}

func parseBlocks(t *testing.T, raw json.RawMessage) []block {
	t.Helper()
	var bs []block
	if err := json.Unmarshal(raw, &bs); err != nil {
		t.Fatalf("blocks %s: %v", raw, err)
	}
	return bs
}

// allText joins every text of the blocks, one per line.
func allText(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	var out []string
	for _, b := range parseBlocks(t, raw) {
		if b.Text != nil {
			out = append(out, b.Text.Text)
		}
		for _, f := range b.Fields {
			out = append(out, f.Text)
		}
		if b.Type == "context" {
			for _, e := range b.Elements {
				if s, ok := e.Text.(string); ok {
					out = append(out, s)
				}
			}
		}
	}
	return strings.Join(out, "\n")
}

func buttons(t *testing.T, raw json.RawMessage) []button {
	t.Helper()
	var out []button
	for _, b := range parseBlocks(t, raw) {
		if b.Type != "actions" {
			continue
		}
		for _, e := range b.Elements {
			text, _ := e.Text.(map[string]any)
			label, _ := text["text"].(string)
			out = append(out, button{e.ActionID, e.Value, label, e.Style, b.BlockID})
		}
	}
	return out
}

func blockIDs(t *testing.T, raw json.RawMessage) map[string]bool {
	t.Helper()
	ids := map[string]bool{}
	for _, b := range parseBlocks(t, raw) {
		ids[b.BlockID] = true
	}
	return ids
}

// fakeClock is a manual clock: timers fire in Advance.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	timers []*fakeTimer
}

type fakeTimer struct {
	c    *fakeClock
	at   time.Time
	f    func()
	done bool
}

func newFakeClock() *fakeClock { return &fakeClock{now: time.Unix(1700000000, 0)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) AfterFunc(d time.Duration, f func()) Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &fakeTimer{c: c, at: c.now.Add(d), f: f}
	c.timers = append(c.timers, t)
	return t
}

func (t *fakeTimer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	was := !t.done
	t.done = true
	return was
}

// pending counts timers that have not fired or been stopped.
func (c *fakeClock) pending() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, t := range c.timers {
		if !t.done {
			n++
		}
	}
	return n
}

// Advance moves the clock and runs the timers that came due, in order.
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	var due []*fakeTimer
	for _, t := range c.timers {
		if !t.done && !t.at.After(c.now) {
			t.done = true
			due = append(due, t)
		}
	}
	c.mu.Unlock()
	for _, t := range due {
		t.f()
	}
}

// posterGoroutines counts goroutines running Poster code.
func posterGoroutines() int {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	n := 0
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "brain/channels/slack.(*Poster)") {
			n++
		}
	}
	return n
}
