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

	"brain/bot"
)

const skillsUsage = "Usage: brain skills list|sync [--config FILE] [--json]"

// skillsCmd is brain skills: list the skills of skills.sources (source,
// content hash, agents using them), or sync fetches the git sources at
// their refs into data_dir, keeping the last good copy on failure. A
// running daemon reads the new files at the next session's load.
func skillsCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || (args[0] != "list" && args[0] != "sync") {
		fmt.Fprintln(stderr, skillsUsage)
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help") {
			return flag.ErrHelp
		}
		return errors.New("skills needs a subcommand: list or sync")
	}
	sub := args[0]
	flags, path := newFlags("skills "+sub, "brain skills "+sub+" [--config FILE] [--json]", stderr)
	asJSON := flags.Bool("json", false, "print JSON")
	if err := parseFlags(flags, args[1:]); err != nil {
		return err
	}
	cfg, err := loadConfig(*path)
	if err != nil {
		return err
	}
	if sub == "sync" {
		if err := bot.SyncSkills(ctx, cfg); err != nil {
			return fmt.Errorf("skills sync:\n%w", err)
		}
	}
	rows, err := bot.ListSkills(cfg)
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if eerr := enc.Encode(rows); eerr != nil {
			return eerr
		}
	} else {
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "NAME\tSOURCE\tHASH\tAGENTS")
		for _, r := range rows {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.Name, r.Source, bot.ShortHash(r.Hash), strings.Join(r.Agents, ","))
		}
		_ = tw.Flush()
	}
	if err != nil {
		return fmt.Errorf("skills have problems:\n%w", err)
	}
	return nil
}
