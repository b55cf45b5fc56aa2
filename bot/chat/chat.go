// Package chat is the terminal conversation of `brain chat`: it reads
// lines, sends them to a session of the engine, prints the session's
// events as they come (console's Printer), answers questions by number and
// decides approvals with y/n; Ctrl-C stops a turn or quits at the prompt.
// It reaches the session through a Transport: a running engine in this
// process (Local, which bot wires), or a daemon's HTTP API (cmd/brain),
// so `brain chat` works beside `brain serve`. It imports no platform, no
// store and not bot.
package chat

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"brain/bot/config"
	"brain/channels/console"
	"brain/engine"
)

// Options are the terminal conversation's settings.
type Options struct {
	Agent string // default: the config's first
	User  string // who talks
	// SessionID continues that session instead of starting one.
	SessionID string
	In        io.Reader
	Out       io.Writer
	// Interrupts delivers Ctrl-C: at the prompt it ends the chat (nil
	// error); during a turn it cancels the turn and the chat goes on.
	Interrupts <-chan struct{}
}

// Run talks with an agent of eng, a started engine, until EOF, /quit or
// ctx ends.
func Run(ctx context.Context, eng *engine.Engine, cfg *config.Config, c Options) error {
	return RunWith(ctx, Local{Engine: eng}, cfg.Agents[0].Name, c)
}

// RunWith talks with an agent through t until EOF, /quit or ctx ends;
// defaultAgent is the agent of a new session when c.Agent is empty.
func RunWith(ctx context.Context, t Transport, defaultAgent string, c Options) error {
	user, out, interrupts := c.User, c.Out, c.Interrupts
	s, err := chatSession(ctx, t, defaultAgent, c)
	if err != nil {
		return err
	}
	agent := s.Agent
	fmt.Fprintf(out, "brain chat with agent %q (session %s)\nType a message. Commands: /resume, /quit. Questions take a number or text; approvals take y or n. Ctrl-C stops a turn, or quits at the prompt.\n", agent, s.ID)
	if c.SessionID != "" {
		fmt.Fprintf(out, "continuing session %s (%s, %d events)\n", s.ID, s.Status, s.LastSeq)
	}
	p := &console.Printer{W: out}
	after := s.LastSeq
	lines := newChatInput(c.In)
	for {
		fmt.Fprint(out, "\n> ")
		line, res, err := lines.next(ctx, interrupts)
		switch res {
		case readInterrupt:
			fmt.Fprintln(out)
			return nil
		case readEOF:
			fmt.Fprintln(out)
			return err
		}
		text := strings.TrimSpace(line)
		command := text
		if rest, ok := strings.CutPrefix(text, "//"); ok {
			text, command = "/"+rest, "" // "//x" sends "/x" as text
		} else if strings.HasPrefix(text, "/") && !chatCommands[text] {
			fmt.Fprintf(out, "! unknown command %s (commands: /resume, /quit; type //... to send text that starts with /)\n", text)
			continue
		}
		if text == "" {
			continue
		}
		switch command {
		case "/quit", "/exit":
			return nil
		case "/resume":
			// With retry: what the stop left unanswered runs again, once.
			retried, err := t.Resume(ctx, s.ID)
			switch {
			case err != nil:
				fmt.Fprintf(out, "! %v\n", err)
			case len(retried) == 0:
				fmt.Fprintln(out, "resumed; send a message to continue")
			default:
				fmt.Fprintf(out, "resumed; running %d unanswered message(s) again\n", len(retried))
				last := retried[len(retried)-1]
				if after, err = follow(ctx, t, s.ID, after, last, p, interrupts); err != nil {
					return err
				}
			}
			continue
		}
		in := engine.Input{Text: text, Author: user}
		if cur, err := t.Session(ctx, s.ID); err == nil {
			if q := cur.OpenQuestion(); q != nil {
				if n, err := strconv.Atoi(text); err == nil && len(q.Options) > 0 {
					if n < 1 || n > len(q.Options) {
						fmt.Fprintf(out, "! choose 1..%d, or type an answer\n", len(q.Options))
						continue
					}
					o := q.Options[n-1]
					in = engine.Input{Text: o.Label, Author: user, Answer: &engine.Answer{QuestionID: q.ID, Value: o.Value}}
				}
			}
		}
		ev, err := t.Send(ctx, s.ID, in)
		if err != nil {
			if errors.Is(err, engine.ErrConflict) {
				fmt.Fprintf(out, "! %v (type /resume)\n", err)
				continue
			}
			return err
		}
		if after, err = follow(ctx, t, s.ID, after, ev.Seq, p, interrupts); err != nil {
			return err
		}
		if after, err = decideApprovals(ctx, t, s.ID, user, after, lines, interrupts, out, p); err != nil {
			return err
		}
	}
}

// decideApprovals asks y/n for each pending approval of the session and
// prints what came of the decisions.
func decideApprovals(ctx context.Context, t Transport, id, user string, after int64, lines *chatInput, interrupts <-chan struct{}, out io.Writer, p *console.Printer) (int64, error) {
	pending, err := t.PendingApprovals(ctx, id)
	if err != nil {
		return after, err
	}
	for i := len(pending) - 1; i >= 0; i-- { // oldest first
		a := pending[i]
		fmt.Fprintf(out, "\nApprove %q (%s)? [y/n] ", a.Card.Title, a.ID)
		line, res, err := lines.next(ctx, interrupts)
		switch res {
		case readInterrupt:
			fmt.Fprintln(out, "\nleft pending")
			return after, nil
		case readEOF:
			return after, err
		}
		// "n not on a Friday": the words after the answer are the
		// comment (approve) or the reason (deny).
		word, comment, _ := strings.Cut(strings.TrimSpace(line), " ")
		answer := strings.ToLower(word)
		approve := answer == "y" || answer == "yes"
		if !approve && answer != "n" && answer != "no" {
			fmt.Fprintln(out, "left pending (answer y or n to decide, optionally followed by a comment or reason)")
			continue
		}
		if err := t.Decide(ctx, a.ID, engine.Decision{Approve: approve, By: user, ViaAPI: true, Comment: comment}); err != nil {
			fmt.Fprintf(out, "! %v\n", err)
			continue
		}
		if after, err = followApply(ctx, t, id, a.ID, after, p); err != nil {
			return after, err
		}
	}
	return after, nil
}

// followApply prints the session's events until the approval is no longer
// applying: the apply's outcome.
func followApply(ctx context.Context, t Transport, id, approvalID string, after int64, p *console.Printer) (int64, error) {
	w, err := t.Watch(ctx, id, after)
	if err != nil {
		return after, err
	}
	defer w.Close()
	for {
		// Status first: its final commit carries the outcome event, so
		// the read below then includes it.
		cur, err := t.Approval(ctx, approvalID)
		if err != nil {
			return after, err
		}
		if cur.Status != engine.ApprovalApplying {
			evs, err := t.Events(ctx, id, after)
			for _, ev := range evs {
				p.Print(ev)
				after = ev.Seq
			}
			return after, err
		}
		b, err := w.Next(ctx, nil)
		if err != nil {
			return after, err
		}
		for _, ev := range b.Events {
			if ev.Seq > after {
				p.Print(ev)
				after = ev.Seq
			}
		}
	}
}

// follow prints the session's events until the turn that takes input seq
// has ended. Ctrl-C (interrupts) cancels the turn; following goes on until
// it has ended.
func follow(ctx context.Context, t Transport, id string, after, seq int64, p *console.Printer, interrupts <-chan struct{}) (int64, error) {
	// The answer prints as the model writes it.
	w, err := t.Watch(ctx, id, after)
	if err != nil {
		return after, err
	}
	defer w.Close()
	for {
		b, err := w.Next(ctx, interrupts)
		if err != nil {
			return after, err
		}
		if b.Interrupted {
			fmt.Fprintln(p.W, "\n^C: stopping the turn (Ctrl-C at the prompt quits)")
			if err := t.Cancel(ctx, id); err != nil {
				fmt.Fprintf(p.W, "! %v\n", err)
			}
			continue
		}
		for _, d := range b.Deltas {
			p.Delta(d)
		}
		for _, ev := range b.Events {
			if ev.Seq > after {
				p.Print(ev)
				after = ev.Seq
			}
		}
		s, err := t.Session(ctx, id)
		if err != nil {
			return after, err
		}
		if s.Status != engine.StatusRunning && s.InputCursor >= seq && s.LastSeq <= after {
			return after, nil
		}
	}
}

// chatCommands are the /commands the chat knows.
var chatCommands = map[string]bool{"/resume": true, "/quit": true, "/exit": true}

// chatSession starts the chat's session, or finds the one to continue.
func chatSession(ctx context.Context, t Transport, defaultAgent string, c Options) (engine.Session, error) {
	if c.SessionID == "" {
		agent := c.Agent
		if agent == "" {
			agent = defaultAgent
		}
		return t.CreateSession(ctx, agent, c.User)
	}
	s, err := t.Session(ctx, c.SessionID)
	if err != nil {
		return engine.Session{}, fmt.Errorf("continue session %s: %w", c.SessionID, err)
	}
	if c.Agent != "" && c.Agent != s.Agent {
		return engine.Session{}, fmt.Errorf("session %s talks to agent %q, not %q", s.ID, s.Agent, c.Agent)
	}
	return s, nil
}
