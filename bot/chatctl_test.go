package bot

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"brain/bot/config"
	"brain/engine"
	"brain/engine/model/fakemodel"
)

// chatRun is a chat running in the background on a pipe.
type chatRun struct {
	t    *testing.T
	in   *io.PipeWriter
	out  *syncBuffer
	intr chan struct{}
	done chan error
	fake *fakemodel.Server
	cfg  *config.Config
}

func startChat(t *testing.T, fake *fakemodel.Server, cfg *config.Config, sessionID string) *chatRun {
	t.Helper()
	pr, pw := io.Pipe()
	c := &chatRun{t: t, in: pw, out: &syncBuffer{}, intr: make(chan struct{}, 1), done: make(chan error, 1), fake: fake, cfg: cfg}
	go func() {
		c.done <- ChatWith(context.Background(), cfg, Options{Stderr: &bytes.Buffer{}},
			ChatOptions{User: "ann", SessionID: sessionID, In: pr, Out: c.out, Interrupts: c.intr})
	}()
	c.waitOut("\n> ")
	return c
}

func (c *chatRun) send(line string) {
	c.t.Helper()
	if _, err := io.WriteString(c.in, line+"\n"); err != nil {
		c.t.Fatal(err)
	}
}

// waitOut waits until the output holds want n times (default once).
func (c *chatRun) waitOut(want string, n ...int) {
	c.t.Helper()
	times := 1
	if len(n) > 0 {
		times = n[0]
	}
	deadline := time.Now().Add(10 * time.Second)
	for strings.Count(c.out.String(), want) < times {
		if time.Now().After(deadline) {
			c.t.Fatalf("output lacks %q (x%d):\n%s", want, times, c.out.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (c *chatRun) wait() error {
	c.t.Helper()
	select {
	case err := <-c.done:
		return err
	case <-time.After(10 * time.Second):
		c.t.Fatalf("chat did not end:\n%s", c.out.String())
		return nil
	}
}

func chatConfig(t *testing.T, extra string) (*fakemodel.Server, *config.Config) {
	t.Helper()
	fake := fakemodel.New()
	t.Cleanup(fake.Close)
	cfg, err := config.Load(writeConfig(t, t.TempDir(), fake.URL(), extra), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	return fake, cfg
}

func TestChat_CtrlCStopsTheTurnThenQuitsAtThePrompt(t *testing.T) {
	fake, cfg := chatConfig(t, "")
	release := make(chan struct{})
	defer close(release)
	fake.Push(fakemodel.Block(release), fakemodel.Text("Still here."))
	c := startChat(t, fake, cfg, "")
	c.send("think for a long time")
	if _, err := fake.WaitRequests(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	c.intr <- struct{}{} // during the turn: it is cancelled, the chat stays
	c.waitOut("^C: stopping the turn")
	c.waitOut("\n> ", 2)
	c.send("/bogus")
	c.waitOut("! unknown command /bogus")
	c.send("again")
	c.waitOut("Still here.")
	c.waitOut("\n> ", 4)
	c.intr <- struct{}{} // at the prompt: the chat ends cleanly
	if err := c.wait(); err != nil {
		t.Fatalf("chat ended with %v", err)
	}
	ins, err := OpenInspector(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer ins.Close()
	list, _ := ins.Sessions(context.Background(), engine.SessionFilter{})
	_, evs, err := ins.Session(context.Background(), list[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	var outcomes []string
	for _, ev := range evs {
		if ev.Type == engine.EventTurnCompleted {
			p, _ := ev.Decode()
			outcomes = append(outcomes, string(p.(engine.TurnCompleted).Outcome))
		}
	}
	if strings.Join(outcomes, ",") != "cancelled,completed" {
		t.Fatalf("turn outcomes %v", outcomes)
	}
}

func TestChat_NumberOutOfRangeIsRefusedAndSessionContinues(t *testing.T) {
	fake, cfg := chatConfig(t, "    tools: [ask]\n")
	fake.Push(
		fakemodel.ToolCalls(fakemodel.Call{Name: "ask", Input: `{"text":"Which env?","options":[{"label":"Staging","value":"staging"},{"label":"Prod","value":"prod"}]}`}),
		fakemodel.Text("Staging it is."),
		fakemodel.Text("Hello again."),
	)
	c := startChat(t, fake, cfg, "")
	c.send("deploy")
	c.waitOut("Which env?")
	c.waitOut("\n> ", 2)
	c.send("7")
	c.waitOut("! choose 1..2")
	c.send("1")
	c.waitOut("Staging it is.")
	c.send("/quit")
	if err := c.wait(); err != nil {
		t.Fatal(err)
	}
	id := strings.Fields(strings.SplitN(c.out.String(), "(session ", 2)[1])[0]
	id = strings.TrimSuffix(id, ")")

	again := startChat(t, fake, cfg, id)
	again.waitOut("continuing session " + id)
	again.send("hi")
	again.waitOut("Hello again.")
	again.send("/quit")
	if err := again.wait(); err != nil {
		t.Fatal(err)
	}
	err := ChatWith(context.Background(), cfg, Options{Stderr: &bytes.Buffer{}},
		ChatOptions{User: "ann", SessionID: "ses_missing", In: strings.NewReader(""), Out: &bytes.Buffer{}})
	if engine.CodeOf(err) != engine.CodeNotFound {
		t.Fatalf("continuing a session that does not exist: %v", err)
	}
}
