package bot

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"brain/bot/config"
	"brain/channels/console"
	"brain/engine"
)

// Chat runs the console channel: a terminal conversation with an agent, in
// this process, on the configured database. It ends at EOF, /quit or when
// ctx is cancelled.
func Chat(ctx context.Context, cfg *config.Config, opts Options, agent, user string, in io.Reader, out io.Writer) error {
	app, err := New(ctx, cfg, opts)
	if err != nil {
		return err
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = app.Shutdown(sctx)
	}()
	eng := app.engine
	if err := eng.Start(ctx); err != nil {
		return err
	}
	if agent == "" {
		agent = cfg.Agents[0].Name
	}
	s, _, err := eng.CreateSession(ctx, engine.NewSession{
		Agent: agent, Origin: engine.OriginConsole, Interactive: true, StartedBy: user,
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "brain chat with agent %q (session %s)\nType a message. Commands: /resume, /quit. Questions take a number or text; approvals take y or n.\n", agent, s.ID)
	p := console.Printer{W: out}
	after := s.LastSeq
	lines := bufio.NewScanner(in)
	lines.Buffer(make([]byte, 64<<10), engine.MaxInputChars*4)
	for {
		fmt.Fprint(out, "\n> ")
		if !lines.Scan() {
			fmt.Fprintln(out)
			return lines.Err()
		}
		text := strings.TrimSpace(lines.Text())
		switch text {
		case "":
			continue
		case "/quit", "/exit":
			return nil
		case "/resume":
			// With retry: what the stop left unanswered runs again, once.
			r, err := eng.ResumeWith(ctx, s.ID, engine.ResumeOptions{Retry: true})
			switch {
			case err != nil:
				fmt.Fprintf(out, "! %v\n", err)
			case len(r.Retried) == 0:
				fmt.Fprintln(out, "resumed; send a message to continue")
			default:
				fmt.Fprintf(out, "resumed; running %d unanswered message(s) again\n", len(r.Retried))
				last := r.Retried[len(r.Retried)-1].Seq
				if after, err = follow(ctx, eng, s.ID, after, last, p); err != nil {
					return err
				}
			}
			continue
		}
		in := engine.Input{Text: text, Author: user}
		if cur, err := eng.Session(ctx, s.ID); err == nil {
			if q := cur.OpenQuestion(); q != nil {
				if n, err := strconv.Atoi(text); err == nil && n >= 1 && n <= len(q.Options) {
					o := q.Options[n-1]
					in = engine.Input{Text: o.Label, Author: user, Answer: &engine.Answer{QuestionID: q.ID, Value: o.Value}}
				}
			}
		}
		ev, _, err := eng.Send(ctx, s.ID, in)
		if err != nil {
			if errors.Is(err, engine.ErrConflict) {
				fmt.Fprintf(out, "! %v (type /resume)\n", err)
				continue
			}
			return err
		}
		if after, err = follow(ctx, eng, s.ID, after, ev.Seq, p); err != nil {
			return err
		}
		if after, err = decideApprovals(ctx, eng, s.ID, user, after, lines, out, p); err != nil {
			return err
		}
	}
}

// decideApprovals asks y/n for each pending approval of the session and
// prints what came of the decisions.
func decideApprovals(ctx context.Context, eng *engine.Engine, id, user string, after int64, lines *bufio.Scanner, out io.Writer, p console.Printer) (int64, error) {
	pending, err := eng.Approvals(ctx, engine.ApprovalFilter{SessionID: id, Statuses: []engine.ApprovalStatus{engine.ApprovalPending}})
	if err != nil {
		return after, err
	}
	for i := len(pending) - 1; i >= 0; i-- { // oldest first
		a := pending[i]
		fmt.Fprintf(out, "\nApprove %q (%s)? [y/n] ", a.Card.Title, a.ID)
		if !lines.Scan() {
			return after, lines.Err()
		}
		answer := strings.ToLower(strings.TrimSpace(lines.Text()))
		approve := answer == "y" || answer == "yes"
		if !approve && answer != "n" && answer != "no" {
			fmt.Fprintln(out, "left pending (answer y or n to decide)")
			continue
		}
		if _, err := eng.Decide(ctx, a.ID, engine.Decision{Approve: approve, By: user, ViaAPI: true}); err != nil {
			fmt.Fprintf(out, "! %v\n", err)
			continue
		}
		for {
			changed := eng.Changed(id)
			// Status first: its final commit carries the outcome event, so
			// the read below then includes it.
			cur, err := eng.Approval(ctx, a.ID)
			if err != nil {
				return after, err
			}
			evs, err := eng.Events(ctx, id, after, 0)
			if err != nil {
				return after, err
			}
			for _, ev := range evs {
				p.Print(ev)
				after = ev.Seq
			}
			if cur.Status != engine.ApprovalApplying {
				break
			}
			select {
			case <-changed:
			case <-ctx.Done():
				return after, ctx.Err()
			}
		}
	}
	return after, nil
}

// follow prints the session's events until the turn that takes input seq
// has ended.
func follow(ctx context.Context, eng *engine.Engine, id string, after, seq int64, p console.Printer) (int64, error) {
	for {
		changed := eng.Changed(id)
		evs, err := eng.Events(ctx, id, after, 0)
		if err != nil {
			return after, err
		}
		for _, ev := range evs {
			p.Print(ev)
			after = ev.Seq
		}
		s, err := eng.Session(ctx, id)
		if err != nil {
			return after, err
		}
		if s.Status != engine.StatusRunning && s.InputCursor >= seq && s.LastSeq <= after {
			return after, nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return after, ctx.Err()
		}
	}
}
