package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"brain/bot"
	"brain/bot/config"
)

const auditUsage = `Usage: brain audit export|verify

  brain audit export --config FILE [--from T] [--to T] [--out FILE]
                     write the audit trail (or a time range of it) as JSON Lines
  brain audit verify [--config FILE | --file EXPORT] [--public-key PEM]
                     check the hash chain and the seals offline; names the
                     first broken entry and exits 1
`

// auditCmd is brain audit export|verify.
func auditCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, auditUsage)
		return errors.New("brain audit: want export or verify")
	}
	switch args[0] {
	case "-h", "--help", "help":
		fmt.Fprint(stdout, auditUsage)
		return nil
	case "export":
		fs, cfgPath := newFlags("audit export", "brain audit export --config FILE [--from T] [--to T] [--out FILE]", stderr)
		from := fs.String("from", "", "first time to export (RFC 3339 or YYYY-MM-DD); empty: the oldest entry")
		to := fs.String("to", "", "time to stop before (RFC 3339 or YYYY-MM-DD); empty: the newest entry")
		out := fs.String("out", "", "file to write (default standard output)")
		if err := parseFlags(fs, args[1:]); err != nil {
			return err
		}
		f, err := parseWhen("--from", *from)
		if err != nil {
			return err
		}
		t, err := parseWhen("--to", *to)
		if err != nil {
			return err
		}
		cfg, err := loadConfig(*cfgPath)
		if err != nil {
			return err
		}
		w := stdout
		if *out != "" {
			file, err := os.Create(*out)
			if err != nil {
				return err
			}
			defer file.Close()
			w = file
		}
		n, err := bot.AuditExport(ctx, cfg, w, f, t)
		if err != nil {
			return err
		}
		fmt.Fprintf(stderr, "exported %d audit entries\n", n)
		return nil
	case "verify":
		fs, cfgPath := newFlags("audit verify", "brain audit verify [--config FILE | --file EXPORT] [--public-key PEM]", stderr)
		file := fs.String("file", "", "verify this JSON Lines export instead of the database")
		pub := fs.String("public-key", "", "Ed25519 public key (PEM) the seals must verify with; default: audit.signing_key_file's")
		if err := parseFlags(fs, args[1:]); err != nil {
			return err
		}
		var cfg *config.Config
		if *file == "" || *pub == "" {
			c, err := loadConfig(*cfgPath)
			if err != nil {
				return err
			}
			cfg = c
		}
		r, err := bot.AuditVerify(ctx, cfg, *file, *pub)
		if err != nil {
			return err
		}
		fmt.Fprintln(stdout, r.Describe())
		if r.Break != nil {
			return fmt.Errorf("audit trail broken at entry %d", r.Break.Seq)
		}
		return nil
	default:
		return fmt.Errorf("unknown audit subcommand %q (want export or verify)", args[0])
	}
}

// parseWhen reads a time flag: RFC 3339, or a UTC date.
func parseWhen(flag, s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("%s %q: want RFC 3339 (2025-06-01T09:00:00Z) or a date (2025-06-01)", flag, s)
}
