package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"brain/bot/api/client"
)

const memoryUsage = "Usage: brain memory list|show|export|delete --config FILE [SCOPE [PATH]]"

// memoryCmd is `brain memory`: agents' memory through the running daemon.
func memoryCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		fmt.Fprintln(stderr, memoryUsage)
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help") {
			return flag.ErrHelp
		}
		return errors.New("memory needs a subcommand: list, show, export or delete")
	}
	sub := args[0]
	synopsis := map[string]string{
		"list":   "brain memory list --config FILE [--json] [SCOPE]",
		"show":   "brain memory show --config FILE [--json] SCOPE PATH",
		"export": "brain memory export --config FILE SCOPE",
		"delete": "brain memory delete --config FILE SCOPE PATH",
	}[sub]
	if synopsis == "" {
		return fmt.Errorf("unknown memory subcommand %q (want list, show, export or delete)", sub)
	}
	fs, config := newFlags("memory "+sub, synopsis, stderr)
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parseFlags(fs, args[1:]); err != nil {
		return err
	}
	want := map[string][2]int{"list": {0, 1}, "show": {2, 2}, "export": {1, 1}, "delete": {2, 2}}[sub]
	if fs.NArg() < want[0] || fs.NArg() > want[1] {
		fs.Usage()
		return fmt.Errorf("memory %s: wrong arguments; %s", sub, synopsis)
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
		if fs.NArg() == 0 {
			scopes, err := d.MemoryScopes(ctx)
			if err != nil || *asJSON {
				return jsonOr(stdout, scopes, err)
			}
			tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "SCOPE\tFILES\tBYTES")
			for _, s := range scopes {
				fmt.Fprintf(tw, "%s\t%d\t%d\n", s.Scope, s.Files, s.Bytes)
			}
			return tw.Flush()
		}
		files, err := d.MemoryFiles(ctx, fs.Arg(0), false)
		if err != nil || *asJSON {
			return jsonOr(stdout, files, err)
		}
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "PATH\tBYTES\tVERSION\tUPDATED\tBY\tSESSION")
		for _, f := range files {
			fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\t%s\n", f.Path, f.Size, f.Version, f.UpdatedAt.Format(time.RFC3339), f.UpdatedBy, f.SessionID)
		}
		return tw.Flush()
	case "show":
		f, hist, err := d.MemoryFile(ctx, fs.Arg(0), fs.Arg(1))
		if err != nil || *asJSON {
			return jsonOr(stdout, map[string]any{"file": f, "history": hist}, err)
		}
		fmt.Fprintf(stdout, "%s %s (version %d, %d bytes)\n\n", f.Scope, f.Path, f.Version, f.Size)
		if f.Content != nil {
			fmt.Fprintln(stdout, *f.Content)
		}
		fmt.Fprintln(stdout, "\nHistory, newest first:")
		for _, h := range hist {
			fmt.Fprintf(stdout, "%s  %s v%d by %s (session %s)\n", h.At.Format(time.RFC3339), h.Op, h.Version, or(h.By, "-"), or(h.SessionID, "-"))
		}
		return nil
	case "export":
		files, err := d.MemoryFiles(ctx, fs.Arg(0), true)
		return jsonOr(stdout, map[string]any{"scope": fs.Arg(0), "files": files}, err)
	default: // delete
		f, _, err := d.MemoryFile(ctx, fs.Arg(0), fs.Arg(1))
		if err != nil {
			return err
		}
		if err := d.DeleteMemoryFile(ctx, fs.Arg(0), fs.Arg(1), f.Version); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "deleted %s %s (version %d)\n", fs.Arg(0), fs.Arg(1), f.Version)
		return nil
	}
}

func jsonOr(w io.Writer, v any, err error) error {
	if err != nil {
		return err
	}
	return printJSON(w, v)
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
