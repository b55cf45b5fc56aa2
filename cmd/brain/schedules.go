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

	"brain/bot"
	"brain/bot/api/client"
)

const schedulesUsage = "Usage: brain schedules list|run --config FILE [NAME]"

func schedules(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		fmt.Fprintln(stderr, schedulesUsage)
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help") {
			return flag.ErrHelp
		}
		return errors.New("schedules needs a subcommand: list or run")
	}
	switch args[0] {
	case "list":
		fs, config := newFlags("schedules list", "brain schedules list --config FILE [--json]", stderr)
		asJSON := fs.Bool("json", false, "print JSON")
		if err := parseFlags(fs, args[1:]); err != nil {
			return err
		}
		cfg, err := loadConfig(*config)
		if err != nil {
			return err
		}
		ins, err := bot.OpenInspector(ctx, cfg)
		if err != nil {
			return err
		}
		defer ins.Close()
		list, err := ins.Schedules(ctx, cfg, time.Now())
		if err != nil {
			return err
		}
		if *asJSON {
			return printJSON(stdout, list)
		}
		return printSchedules(stdout, list)
	case "run":
		fs, config := newFlags("schedules run", "brain schedules run --config FILE NAME", stderr)
		if err := parseFlags(fs, args[1:]); err != nil {
			return err
		}
		if fs.NArg() != 1 {
			fs.Usage()
			return errors.New("schedules run needs one schedule NAME")
		}
		cfg, err := loadConfig(*config)
		if err != nil {
			return err
		}
		d, err := client.Dial(cfg)
		if err != nil {
			return err
		}
		run, err := d.RunSchedule(ctx, fs.Arg(0))
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "started run of %s for %s: session %s (%s)\n",
			run.Schedule, run.FireTime.Format(time.RFC3339), run.SessionID, run.Status)
		return nil
	default:
		return fmt.Errorf("unknown schedules subcommand %q (want list or run)", args[0])
	}
}

// printSchedules writes one line per schedule: its next fire time in its
// own zone and its last run.
func printSchedules(w io.Writer, list []bot.ScheduleStatus) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tCRON\tTIMEZONE\tNEXT FIRE\tLAST RUN")
	for _, s := range list {
		next := "-"
		switch {
		case !s.Enabled:
			next = "disabled"
		case s.NextFire != nil:
			next = s.NextFire.Format("2006-01-02 15:04 MST")
		}
		last := "never"
		if len(s.LastRuns) > 0 {
			r := s.LastRuns[0]
			last = fmt.Sprintf("%s (%s)", r.Status, r.FireTime.Format("2006-01-02 15:04 MST"))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", s.Name, s.Cron, s.Timezone, next, last)
	}
	return tw.Flush()
}
