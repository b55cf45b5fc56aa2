package linearbridge

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"brain/bot/bridge"
	"brain/bot/config"
	"brain/store"
)

// WriteStatus writes the Linear workspaces that installed the app, with
// their state and token expiry, and what to do about a disconnected one
// (brain linear status). Tokens are never printed.
func WriteStatus(ctx context.Context, cfg *config.Config, tokens store.LinearTokens, now time.Time, w io.Writer) error {
	if cfg.Linear == nil {
		_, err := fmt.Fprintln(w, "Linear is not configured (no linear block).")
		return err
	}
	toks, err := tokens.LinearTokens(ctx)
	if err != nil {
		return err
	}
	install := cfg.PublicURL + InstallPath
	if cfg.Linear.AccessToken != "" {
		fmt.Fprintln(w, "linear.access_token: a static token, used for workspaces without an installation; it is never refreshed.")
	}
	if len(toks) == 0 {
		if cfg.Linear.OAuth() {
			fmt.Fprintf(w, "No Linear workspace has installed the app yet: open %s\n", install)
		}
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "WORKSPACE\tORGANIZATION\tSTATUS\tTOKEN EXPIRES\tUPDATED")
	for _, t := range toks {
		fmt.Fprintf(tw, "%s (%s)\t%s\t%s\t%s\t%s\n", t.OrganizationName, t.URLKey, t.OrganizationID, t.Status,
			expiry(t.ExpiresAt, now), t.UpdatedAt.UTC().Format(time.RFC3339))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, t := range toks {
		if t.Status == store.LinearRevoked {
			fmt.Fprintf(w, "\n%s is disconnected: %s. Its webhooks are kept; install the app again at %s\n", t.OrganizationName, t.Problem, install)
		}
	}
	return nil
}

// expiry says when a token expires, relative to now; a token past its
// expiry is refreshed on its next use.
func expiry(at, now time.Time) string {
	switch {
	case at.IsZero():
		return "never"
	case !at.After(now):
		return fmt.Sprintf("%s (expired; refreshed on next use)", at.UTC().Format(time.RFC3339))
	}
	return fmt.Sprintf("%s (in %s)", at.UTC().Format(time.RFC3339), at.Sub(now).Round(time.Minute))
}

// Status is Linear's section of the console's status page: whether its
// tokens work, and each installed workspace with its token's state.
func (p *Platform) Status(ctx context.Context, connection func(context.Context) error) bridge.Section {
	sec := bridge.Section{Title: "Linear", State: "ok"}
	sec.Rows = append(sec.Rows, bridge.ConnectionRow(ctx, connection, &sec))
	if p.cfg.Linear.AccessToken != "" {
		sec.Rows = append(sec.Rows, bridge.Row{Label: "Static token", Value: "linear.access_token (never refreshed)"})
	}
	toks, err := p.store.LinearTokens(ctx)
	if err != nil {
		sec.State = "down"
		return sec
	}
	for _, t := range toks {
		state := t.Status
		if state == store.LinearRevoked {
			sec.State = "warn"
			state += ": " + t.Problem
		}
		sec.Rows = append(sec.Rows, bridge.Row{Label: fmt.Sprintf("%s (%s)", t.OrganizationName, t.URLKey),
			Value: state + " · token expires " + expiry(t.ExpiresAt, p.now())})
	}
	if len(toks) == 0 && p.cfg.Linear.OAuth() {
		sec.Rows = append(sec.Rows, bridge.Row{Label: "Workspaces", Value: "none installed yet"})
	}
	return sec
}
