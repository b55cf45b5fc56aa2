package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

const peopleUsage = "Usage: brain people erase [--json] PERSON (via the running daemon)"

// people runs brain people erase through the daemon.
func people(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		fmt.Fprintln(stderr, peopleUsage)
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help") {
			return flag.ErrHelp
		}
		return errors.New("people needs a subcommand: erase")
	}
	if args[0] != "erase" {
		fmt.Fprintln(stderr, peopleUsage)
		return fmt.Errorf("unknown people subcommand %q", args[0])
	}
	fs, config := newFlags("people erase", "brain people erase --config FILE [--json] PERSON", stderr)
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parseFlags(fs, args[1:]); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return errors.New("people erase needs one person id")
	}
	d, err := dialConfig(*config)
	if err != nil {
		return err
	}
	out, err := d.ErasePerson(ctx, fs.Arg(0))
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(stdout, out)
	}
	_, err = fmt.Fprintf(stdout, "erased %s: %d messages in %d sessions replaced by a marker, %d files, %d memory files, %d identities and their connections\n",
		out.Person, out.Messages, out.Sessions, out.Files, out.Memory, out.Identities)
	return err
}
