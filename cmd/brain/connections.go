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

const connectionsUsage = "Usage: brain connections list [--person ID] [--json] | revoke ID | connect PROVIDER [--person ID] | service-account [--off] ID (via the running daemon)"

// connections runs brain connections list|revoke|connect|service-account
// through the daemon.
func connections(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		fmt.Fprintln(stderr, connectionsUsage)
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help") {
			return flag.ErrHelp
		}
		return errors.New("connections needs a subcommand: list, revoke, connect or service-account")
	}
	switch args[0] {
	case "list":
		fs, config := newFlags("connections list", "brain connections list --config FILE [--person ID] [--json]", stderr)
		person := fs.String("person", "", "only this person's connections")
		asJSON := fs.Bool("json", false, "print JSON")
		if err := parseFlags(fs, args[1:]); err != nil {
			return err
		}
		d, err := dialConfig(*config)
		if err != nil {
			return err
		}
		var only *string
		fs.Visit(func(f *flag.Flag) {
			if f.Name == "person" {
				only = person
			}
		})
		list, err := d.Connections(ctx, only)
		if err != nil {
			return err
		}
		if *asJSON {
			return printJSON(stdout, list)
		}
		return printConnections(stdout, list)
	case "revoke":
		fs, config := newFlags("connections revoke", "brain connections revoke --config FILE ID", stderr)
		if err := parseFlags(fs, args[1:]); err != nil {
			return err
		}
		if fs.NArg() != 1 {
			fs.Usage()
			return errors.New("connections revoke needs one connection ID")
		}
		d, err := dialConfig(*config)
		if err != nil {
			return err
		}
		c, err := d.RevokeConnection(ctx, fs.Arg(0), "")
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%s: %s (%s)\n", c.ID, c.Status, c.Problem)
		return nil
	case "connect":
		return connectCmd(ctx, args[1:], stdout, stderr)
	case "service-account":
		fs, config := newFlags("connections service-account", "brain connections service-account --config FILE [--off] ID", stderr)
		off := fs.Bool("off", false, "take the mark back")
		if err := parseFlags(fs, args[1:]); err != nil {
			return err
		}
		if fs.NArg() != 1 {
			fs.Usage()
			return errors.New("connections service-account needs one connection ID")
		}
		d, err := dialConfig(*config)
		if err != nil {
			return err
		}
		c, err := d.MarkServiceAccount(ctx, fs.Arg(0), !*off)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%s: %s of person %s, service account: %t\n", c.ID, c.Provider, c.PersonID, c.ServiceAccount)
		return nil
	default:
		fmt.Fprintln(stderr, connectionsUsage)
		return fmt.Errorf("unknown connections subcommand %q", args[0])
	}
}

// connectCmd prints the URL that connects a person's account (or, with
// no --person, the workspace's) to a provider; whoever opens it within its
// lifetime connects that holder, so hand it only to them.
func connectCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, config := newFlags("connections connect", "brain connections connect --config FILE PROVIDER [--person ID]", stderr)
	person := fs.String("person", "", "the person to connect (none: the workspace's connection)")
	// Flags may follow the provider: brain connections connect mcp:notes --person alice.
	var provider string
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		provider, args = args[0], args[1:]
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if provider == "" && fs.NArg() == 1 {
		provider = fs.Arg(0)
	} else if provider == "" || fs.NArg() != 0 {
		fs.Usage()
		return errors.New("connections connect needs one provider (mcp:<server>, github, http:<tool>)")
	}
	d, err := dialConfig(*config)
	if err != nil {
		return err
	}
	link, err := d.Connect(ctx, provider, *person)
	if err != nil {
		return err
	}
	holder := "the workspace"
	if *person != "" {
		holder = *person
	}
	fmt.Fprintf(stderr, "Open this within %d minutes, as %s: it connects %s's account to %s.\n", link.ExpiresIn/60, holder, holder, provider)
	fmt.Fprintln(stdout, link.URL)
	return nil
}

func dialConfig(path string) (*client.Daemon, error) {
	cfg, err := loadConfig(path)
	if err != nil {
		return nil, err
	}
	return client.Dial(cfg)
}

func printConnections(w io.Writer, list []client.Connection) error {
	if len(list) == 0 {
		_, err := fmt.Fprintln(w, "No connections.")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tPERSON\tPROVIDER\tACCOUNT\tSCOPE\tEXPIRES\tSTATUS")
	for _, c := range list {
		person, expires := c.PersonID, "-"
		if person == "" {
			person = "(workspace)"
		}
		if c.ExpiresAt != nil {
			expires = c.ExpiresAt.Format(time.RFC3339)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", c.ID, person, c.Provider, c.Account, c.Scope, expires, c.Status)
	}
	return tw.Flush()
}
