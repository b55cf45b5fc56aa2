package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"brain/bot"
)

const linearUsage = "Usage: brain linear status --config FILE"

// linear runs brain linear status: the connected workspaces and when
// their tokens expire.
func linear(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "status" {
		fmt.Fprintln(stderr, linearUsage)
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help") {
			return flag.ErrHelp
		}
		return errors.New("linear needs a subcommand: status")
	}
	fs, config := newFlags("linear status", "brain linear status --config FILE", stderr)
	if err := fs.Parse(args[1:]); err != nil {
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
	return ins.LinearStatus(ctx, cfg, time.Now(), stdout)
}
