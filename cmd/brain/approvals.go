package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"brain/bot/api/client"
	"brain/engine"
)

const approvalsUsage = "Usage: brain approvals list|show|approve|deny [--config FILE] [ID]"

// approvals works through the running daemon's API (its first API key).
func approvals(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		fmt.Fprintln(stderr, approvalsUsage)
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help") {
			return flag.ErrHelp
		}
		return errors.New("approvals needs a subcommand: list, show, approve or deny")
	}
	sub := args[0]
	synopsis := map[string]string{
		"list":    "brain approvals list [--config FILE] [--status S] [--json]",
		"show":    "brain approvals show [--config FILE] [--json] ID",
		"approve": "brain approvals approve [--config FILE] [--as NAME] [--comment TEXT] ID",
		"deny":    "brain approvals deny [--config FILE] [--as NAME] [--comment REASON] ID",
	}[sub]
	if synopsis == "" {
		return fmt.Errorf("unknown approvals subcommand %q (want list, show, approve or deny)", sub)
	}
	fs, config := newFlags("approvals "+sub, synopsis, stderr)
	status := fs.String("status", "pending,unconfirmed", "list: only these statuses (comma-separated; \"\" for all)")
	asJSON := fs.Bool("json", false, "print JSON")
	as := fs.String("as", "", "approve/deny: decide as this person (default: the API key's name; needs act_for)")
	comment := fs.String("comment", "", "approve/deny: a comment (approve) or the reason (deny); the agent sees it")
	if err := parseFlags(fs, args[1:]); err != nil {
		return err
	}
	if want := map[bool]int{true: 0, false: 1}[sub == "list"]; fs.NArg() != want {
		fs.Usage()
		return fmt.Errorf("approvals %s needs %d approval ID", sub, want)
	}
	cfg, err := loadConfig(*config)
	if err != nil {
		return err
	}
	d, err := client.Dial(cfg)
	if err != nil {
		return err
	}
	switch sub {
	case "list":
		list, err := d.Approvals(ctx, *status)
		if err != nil {
			return err
		}
		if *asJSON {
			return printJSON(stdout, list)
		}
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tSTATUS\tTOOL\tTITLE\tSESSION\tREQUESTED BY\tCREATED")
		for _, a := range list {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", a.ID, a.Status, a.Tool, a.Card.Title, a.SessionID, a.RequestedBy, a.CreatedAt.Local().Format(time.DateTime))
		}
		return tw.Flush()
	case "show":
		a, err := d.Approval(ctx, fs.Arg(0))
		if err != nil {
			return err
		}
		if *asJSON {
			return printJSON(stdout, a)
		}
		printApproval(stdout, a)
		return nil
	default:
		a, err := d.DecideWithComment(ctx, fs.Arg(0), sub == "approve", *as, *comment)
		if err != nil {
			return err
		}
		printApproval(stdout, a)
		return nil
	}
}

func printApproval(w io.Writer, a engine.Approval) {
	fmt.Fprintf(w, "approval %s: %s\n  %s\n", a.ID, a.Status, a.Card.Title)
	for _, f := range a.Card.Facts {
		fmt.Fprintf(w, "  %s: %s\n", f.Label, f.Value)
	}
	fmt.Fprintf(w, "  tool: %s\n  session: %s\n  requested by: %s\n", a.Tool, a.SessionID, a.RequestedBy)
	if a.DecidedBy != "" {
		fmt.Fprintf(w, "  decided by: %s at %s\n", a.DecidedBy, a.DecidedAt.Local().Format(time.DateTime))
	}
	printTeamFields(w, a)
	if a.Error != "" {
		fmt.Fprintf(w, "  error: %s\n", a.Error)
	}
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// printTeamFields shows the policy, the approvals so far and the comment.
func printTeamFields(w io.Writer, a engine.Approval) {
	if a.Policy != "" {
		fmt.Fprintf(w, "  policy: %s\n", a.Policy)
	}
	if a.Needed() > 1 {
		fmt.Fprintf(w, "  approvals: %d of %d\n", len(a.Votes), a.Needed())
		for _, v := range a.Votes {
			fmt.Fprintf(w, "    %s at %s %s\n", v.By, v.At.Local().Format(time.DateTime), v.Comment)
		}
	}
	if a.Comment != "" {
		fmt.Fprintf(w, "  comment: %s\n", a.Comment)
	}
}
