package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"brain/bot"
	"brain/bot/config"
)

// defaultConfig is what every command's --config defaults to.
const defaultConfig = "config.yaml"

const configUsage = "Usage: brain config check [--config FILE]"

// loadConfig loads the file at path; a missing file gets a first-run hint.
func loadConfig(path string) (*config.Config, error) {
	if err := missingConfig(path); err != nil {
		return nil, err
	}
	return config.Load(path, os.LookupEnv)
}

// missingConfig says what to do when there is no file at path.
func missingConfig(path string) error {
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	hint := "pass --config FILE"
	if path == defaultConfig {
		hint = "copy the example to start: cp config.example.yaml config.yaml (then edit it), or pass --config FILE"
	}
	return fmt.Errorf("config file %s not found; %s", path, hint)
}

// configCmd is `brain config check`: every problem of the file, without
// binding a port, opening the database or connecting anywhere.
func configCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "check" {
		fmt.Fprintln(stderr, configUsage)
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help") {
			return flag.ErrHelp
		}
		return errors.New("config needs a subcommand: check")
	}
	flags, path := newFlags("config check", "brain config check [--config FILE]", stderr)
	if err := parseFlags(flags, args[1:]); err != nil {
		return err
	}
	if err := missingConfig(*path); err != nil {
		return err
	}
	cfg, err := config.Check(*path, os.LookupEnv)
	if cfg != nil {
		err = errors.Join(err, bot.CheckConfig(cfg, bot.Options{}))
	}
	if err != nil {
		// One problem per line, however the errors were joined.
		for _, line := range strings.Split(strings.TrimSpace(err.Error()), "\n") {
			if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "config "+*path+":") {
				fmt.Fprintln(stdout, "  "+line)
			}
		}
		return fmt.Errorf("config %s has problems (listed above)", *path)
	}
	for _, use := range cfg.MissingEnvUses() {
		fmt.Fprintf(stdout, "warning: environment variable %s is not set; what uses it will not work\n", use)
	}
	for _, key := range cfg.Unsupported() {
		fmt.Fprintf(stdout, "warning: %s is valid but this build does not run it yet; it is ignored\n", key)
	}
	fmt.Fprintf(stdout, "config %s: ok\n", *path)
	return nil
}

// parseFlags parses args, accepting flags after positional arguments
// (`brain sessions show ID --config F`): the positionals keep their order.
func parseFlags(fs *flag.FlagSet, args []string) error {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return err
		}
		args = fs.Args()
		if len(args) == 0 {
			break
		}
		if args[0] == "--" {
			positional = append(positional, args[1:]...)
			break
		}
		positional = append(positional, args[0])
		args = args[1:]
	}
	return fs.Parse(append([]string{"--"}, positional...))
}
