package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"brain/bot"
)

const secretsUsage = `Usage:
  brain secrets keygen                 print a new random key (a line for secrets.key_file)
  brain secrets rotate --config FILE   re-encrypt stored credentials under the key file's first key`

// secrets runs brain secrets keygen|rotate.
func secrets(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprintln(stderr, secretsUsage)
		return errors.New("secrets needs a subcommand: keygen or rotate")
	}
	switch args[0] {
	case "-h", "--help":
		fmt.Fprintln(stdout, secretsUsage)
		return flag.ErrHelp
	case "keygen":
		return bot.GenerateSecretsKey(stdout)
	case "rotate":
		fs, config := newFlags("secrets rotate", "brain secrets rotate --config FILE", stderr)
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		cfg, err := loadConfig(*config)
		if err != nil {
			return err
		}
		return bot.RotateSecrets(ctx, cfg, stdout)
	default:
		fmt.Fprintln(stderr, secretsUsage)
		return fmt.Errorf("unknown secrets subcommand %q", args[0])
	}
}
