// Command brain runs the brain daemon and its tools: serve, chat, sessions,
// schedules, version. It parses flags and handles signals; everything else is in bot.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"os/user"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"brain/bot"
	"brain/bot/api/client"
	"brain/engine"
)

const usage = `brain: durable LLM agent sessions for Slack threads, Linear issues and the API.

Usage:
  brain serve --config FILE              run the daemon (API, channels, schedules)
  brain chat --config FILE [--agent A] [--session ID]
                                         talk to an agent in this terminal (Ctrl-C stops a turn)
  brain sessions list --config FILE      list sessions, newest first
  brain sessions show --config FILE ID   show a session and its events
  brain sessions send|resume|cancel ID   act on a session (via the running daemon)
  brain sessions compact ID              compact a session's context now (via the daemon)
  brain approvals list|show|approve|deny list and decide approvals (via the running daemon)
  brain schedules list --config FILE     list schedules, next fire times, last runs
  brain schedules run --config FILE NAME run a schedule now (via the running daemon)
  brain memory list|show|export|delete   agents' memory files (via the running daemon)
  brain linear status --config FILE      list connected Linear workspaces, token expiry
  brain config check [--config FILE]     check a config without starting anything
  brain audit export --config FILE       write the audit trail as JSON Lines (--from, --to)
  brain audit verify --config FILE       check the audit trail's chain and seals offline
  brain skills list|sync --config FILE   list skills (source, hash, agents); sync fetches git sources
  brain migrate --to postgres --dsn URL  copy the SQLite database into PostgreSQL
  brain connections list|revoke|connect list connections (never tokens); revoke one; print a connect URL (via the running daemon)
  brain people erase PERSON             erase a person's messages, files, memory and identities (via the running daemon)
  brain secrets keygen|rotate           make a key; re-encrypt stored credentials under the current key
  brain completion bash|zsh              print a shell completion script
  brain version                          print version, commit, build date and Go version

Run "brain COMMAND --help" for a command's flags.
`

func main() {
	if len(os.Args) > 1 && os.Args[1] == bot.SandboxHelperCommand {
		// Inside a sandbox: no config, no signals of brain's own.
		os.Exit(bot.SandboxHelper(os.Args[2:]))
	}
	stopOn := []os.Signal{os.Interrupt, syscall.SIGTERM}
	if len(os.Args) > 1 && os.Args[1] == "chat" {
		stopOn = []os.Signal{syscall.SIGTERM} // chat handles Ctrl-C itself
	}
	ctx, stop := signal.NotifyContext(context.Background(), stopOn...)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "brain:", err)
		}
		os.Exit(exitCode(err))
	}
}

func exitCode(err error) int {
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	return 1
}

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return errors.New("no command given")
	}
	switch args[0] {
	case "-h", "--help", "help":
		fmt.Fprint(stdout, usage)
		return nil
	case "serve":
		return serve(ctx, args[1:], stderr)
	case "chat":
		return chat(ctx, args[1:], stdin, stdout, stderr)
	case "sessions":
		return sessions(ctx, args[1:], stdout, stderr)
	case "schedules":
		return schedules(ctx, args[1:], stdout, stderr)
	case "linear":
		return linear(ctx, args[1:], stdout, stderr)
	case "memory":
		return memoryCmd(ctx, args[1:], stdout, stderr)
	case "config":
		return configCmd(ctx, args[1:], stdout, stderr)
	case "skills":
		return skillsCmd(ctx, args[1:], stdout, stderr)
	case "approvals":
		return approvals(ctx, args[1:], stdout, stderr)
	case "audit":
		return auditCmd(ctx, args[1:], stdout, stderr)
	case "migrate":
		return migrateCmd(ctx, args[1:], stdout, stderr)
	case "secrets":
		return secrets(ctx, args[1:], stdout, stderr)
	case "connections":
		return connections(ctx, args[1:], stdout, stderr)
	case "people":
		return people(ctx, args[1:], stdout, stderr)
	case "completion":
		return completion(args[1:], stdout, stderr)
	case "version":
		printVersion(stdout)
		return nil
	default:
		fmt.Fprint(stderr, usage)
		return fmt.Errorf("unknown command %q", args[0])
	}
}

// newFlags makes a flag set whose --help prints the command's synopsis.
func newFlags(name, synopsis string, stderr io.Writer) (*flag.FlagSet, *string) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	config := fs.String("config", defaultConfig, "path to the YAML config file (copy config.example.yaml to start)")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: %s\n\nFlags:\n", synopsis)
		fs.PrintDefaults()
	}
	return fs, config
}

func serve(ctx context.Context, args []string, stderr io.Writer) error {
	fs, config := newFlags("serve", "brain serve --config FILE", stderr)
	grace := fs.Duration("grace", 30*time.Second, "how long running turns may finish at shutdown before they are marked interrupted")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	cfg, err := loadConfig(*config)
	if err != nil {
		return err
	}
	return bot.Run(ctx, cfg, bot.Options{Stderr: stderr, Build: bot.Build{Version: version, Commit: commit}}, *grace)
}

func chat(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs, config := newFlags("chat", "brain chat --config FILE [--agent NAME] [--session ID]", stderr)
	agent := fs.String("agent", "", "agent to talk to (default: the first in the config)")
	session := fs.String("session", "", "continue this session instead of starting one")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	cfg, err := loadConfig(*config)
	if err != nil {
		return err
	}
	// The console is for people; keep the daemon's log lines to warnings.
	cfg.Log.Level = "warn"
	name := "console"
	if u, err := user.Current(); err == nil {
		name = u.Username
	}
	// Ctrl-C stops the running turn, or ends the chat at the prompt.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt)
	defer func() {
		signal.Stop(sigs)
		close(sigs) // nothing sends after Stop
	}()
	interrupts := make(chan struct{}, 1)
	go func() {
		for range sigs {
			select {
			case interrupts <- struct{}{}:
			default:
			}
		}
	}()
	opts := bot.ChatOptions{Agent: *agent, User: name, SessionID: *session, In: stdin, Out: stdout, Interrupts: interrupts}
	err = bot.ChatWith(ctx, cfg, bot.Options{Stderr: stderr}, opts)
	if !errors.Is(err, bot.ErrDataDirInUse) {
		return err
	}
	// `brain serve` owns the data directory: talk to it through its API.
	d, derr := client.Dial(cfg)
	if derr != nil {
		return fmt.Errorf("%w; and its API: %v", err, derr)
	}
	if len(cfg.APIKeys) > 0 {
		opts.User = "" // the API key's name is who talks
	}
	fmt.Fprintf(stdout, "brain serve holds %s; chatting through its API at %s\n", cfg.DataDir, cfg.Listen)
	return bot.ChatThrough(ctx, apiChat{d}, cfg, opts)
}

func sessions(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		fmt.Fprintln(stderr, "Usage: brain sessions list|show|send|resume|cancel|compact --config FILE [ID] [TEXT]")
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help") {
			return flag.ErrHelp
		}
		return errors.New("sessions needs a subcommand: list, show, send, resume, cancel or compact")
	}
	switch args[0] {
	case "list":
		fs, config := newFlags("sessions list", "brain sessions list --config FILE [--status S] [--limit N]", stderr)
		status := fs.String("status", "", "only sessions with this status (idle, running, awaiting_input, interrupted, failed)")
		limit := fs.Int("limit", 50, "at most this many sessions")
		asJSON := fs.Bool("json", false, "print JSON")
		if err := parseFlags(fs, args[1:]); err != nil {
			return err
		}
		ins, err := openInspector(ctx, *config)
		if err != nil {
			return err
		}
		defer ins.Close()
		f := engine.SessionFilter{Limit: *limit}
		if *status != "" {
			f.Statuses = []engine.Status{engine.Status(*status)}
		}
		list, err := ins.Sessions(ctx, f)
		if err != nil {
			return err
		}
		if *asJSON {
			if list == nil {
				list = []engine.Session{}
			}
			return printJSON(stdout, list)
		}
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tAGENT\tORIGIN\tSTATUS\tEVENTS\tUPDATED")
		for _, s := range list {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\n", s.ID, s.Agent, s.Origin, s.Status, s.LastSeq, s.UpdatedAt.Local().Format(time.DateTime))
		}
		return tw.Flush()
	case "show":
		fs, config := newFlags("sessions show", "brain sessions show --config FILE ID", stderr)
		if err := parseFlags(fs, args[1:]); err != nil {
			return err
		}
		if fs.NArg() != 1 {
			fs.Usage()
			return errors.New("sessions show needs one session ID")
		}
		ins, err := openInspector(ctx, *config)
		if err != nil {
			return err
		}
		defer ins.Close()
		s, evs, err := ins.Session(ctx, fs.Arg(0))
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "session %s\n  agent: %s\n  origin: %s\n  status: %s\n  created: %s\n\n",
			s.ID, s.Agent, s.Origin, s.Status, s.CreatedAt.Local().Format(time.DateTime))
		for _, ev := range evs {
			fmt.Fprintf(stdout, "%5d  %s  %-20s %s\n", ev.Seq, ev.CreatedAt.Local().Format("15:04:05.000"), ev.Type, ev.Data)
		}
		return nil
	case "send", "resume", "cancel", "compact":
		return sessionAction(ctx, args[0], args[1:], stdout, stderr)
	default:
		return fmt.Errorf("unknown sessions subcommand %q (want list, show, send, resume, cancel or compact)", args[0])
	}
}

func openInspector(ctx context.Context, path string) (*bot.Inspector, error) {
	cfg, err := loadConfig(path)
	if err != nil {
		return nil, err
	}
	return bot.OpenInspector(ctx, cfg)
}
