package main

import (
	"context"
	"fmt"
	"io"
	"os/user"
	"strings"

	"brain/bot/api/client"
)

// sessionAction is `brain sessions send|resume|cancel|compact`, through the
// running daemon's API.
func sessionAction(ctx context.Context, sub string, args []string, stdout, stderr io.Writer) error {
	synopsis := map[string]string{
		"send":    "brain sessions send [--config FILE] ID TEXT...",
		"resume":  "brain sessions resume [--config FILE] ID",
		"cancel":  "brain sessions cancel [--config FILE] ID",
		"compact": "brain sessions compact [--config FILE] ID",
	}[sub]
	fs, config := newFlags("sessions "+sub, synopsis, stderr)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() < 1 || sub == "send" && fs.NArg() < 2 || sub != "send" && fs.NArg() != 1 {
		fs.Usage()
		return fmt.Errorf("sessions %s: want %s", sub, strings.TrimPrefix(synopsis, "brain sessions "+sub+" [--config FILE] "))
	}
	cfg, err := loadConfig(*config)
	if err != nil {
		return err
	}
	d, err := client.Dial(cfg)
	if err != nil {
		return err
	}
	id := fs.Arg(0)
	switch sub {
	case "send":
		author := "cli"
		if u, err := user.Current(); err == nil {
			author = u.Username
		}
		ev, err := d.Send(ctx, id, strings.Join(fs.Args()[1:], " "), author)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "sent to %s as event %d (%s)\n", id, ev.Seq, ev.ID)
	case "resume":
		s, err := d.Resume(ctx, id)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "session %s resumed: %s\n", s.ID, s.Status)
	case "cancel":
		s, err := d.Cancel(ctx, id)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "session %s cancelled: %s\n", s.ID, s.Status)
	case "compact":
		c, err := d.Compact(ctx, id)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "session %s compacted: about %d -> %d tokens (%d tool results shortened", id, c.TokensBefore, c.TokensAfter, len(c.Shortened))
		if c.Summary != "" {
			fmt.Fprintf(stdout, ", events %d-%d summarised", c.FromSeq, c.ToSeq)
		}
		fmt.Fprintln(stdout, ")")
	}
	return nil
}
