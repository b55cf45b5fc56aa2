// Package client is the Go client of brain's HTTP API (/v1), beside the
// handlers it calls: what the CLI's approvals, sessions and schedules
// commands use, so they act through the running daemon (its engine, its
// checks) instead of opening the database under it. It imports the API's
// wire types and engine's records, never the daemon's wiring (bot).
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"

	"net/http"
	"net/url"
	"time"

	"brain/bot/api"
	"brain/bot/config"
	"brain/engine"
)

// Daemon is a client of the running brain's API at cfg.Listen, with the
// config's first API key.
type Daemon struct {
	base string
	key  string
	http *http.Client
}

// Dial returns a client of the daemon cfg describes. It connects nothing
// until the first call.
func Dial(cfg *config.Config) (*Daemon, error) {
	base, err := daemonURL(cfg.Listen)
	if err != nil {
		return nil, err
	}
	d := &Daemon{base: base, http: &http.Client{Timeout: 30 * time.Second}}
	if len(cfg.APIKeys) > 0 {
		d.key = cfg.APIKeys[0].Key
	}
	return d, nil
}

// call sends in (JSON, when not nil) and decodes a 2xx answer into out; an
// error answer becomes an engine error with its code and message.
func (d *Daemon) call(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		raw, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, method, d.base+path, body)
	if err != nil {
		return err
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if d.key != "" {
		req.Header.Set("Authorization", "Bearer "+d.key)
	}
	resp, err := d.http.Do(req)
	if err != nil {
		return fmt.Errorf("brain does not answer at %s; is `brain serve` running with this config? (%v)", d.base, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return fmt.Errorf("%s %s: read answer: %w", method, path, err)
	}
	if resp.StatusCode/100 != 2 {
		var env api.ErrorEnvelope
		if json.Unmarshal(raw, &env) != nil || env.Error.Code == "" {
			return fmt.Errorf("%s %s: %s from %s", method, path, resp.Status, d.base)
		}
		return engine.Errorf(env.Error.Code, "%s", env.Error.Message)
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("%s %s: decode answer: %w", method, path, err)
	}
	return nil
}

// Approvals lists approvals, newest first; status may be "" (all) or a
// comma-separated list such as "pending,unconfirmed".
func (d *Daemon) Approvals(ctx context.Context, status string) ([]engine.Approval, error) {
	return d.listApprovals(ctx, url.Values{}, status)
}

// listApprovals is GET /v1/approvals with q and status ("" = all).
func (d *Daemon) listApprovals(ctx context.Context, q url.Values, status string) ([]engine.Approval, error) {
	if status != "" {
		q.Set("status", status)
	}
	var out struct {
		Approvals []engine.Approval `json:"approvals"`
	}
	err := d.call(ctx, http.MethodGet, "/v1/approvals?"+q.Encode(), nil, &out)
	return out.Approvals, err
}

// Approval returns one approval.
func (d *Daemon) Approval(ctx context.Context, id string) (engine.Approval, error) {
	var ap engine.Approval
	err := d.call(ctx, http.MethodGet, "/v1/approvals/"+url.PathEscape(id), nil, &ap)
	return ap, err
}

// Decide approves or denies an approval as by ("" = the API key's name).
func (d *Daemon) Decide(ctx context.Context, id string, approve bool, by string) (engine.Approval, error) {
	return d.DecideWithComment(ctx, id, approve, by, "")
}

// DecideWithComment is Decide with the approver's comment (approve) or the
// reason (deny).
func (d *Daemon) DecideWithComment(ctx context.Context, id string, approve bool, by, comment string) (engine.Approval, error) {
	decision := "deny"
	if approve {
		decision = "approve"
	}
	var ap engine.Approval
	err := d.call(ctx, http.MethodPost, "/v1/approvals/"+url.PathEscape(id)+"/decision",
		map[string]string{"decision": decision, "by": by, "comment": comment}, &ap)
	return ap, err
}

// Send posts a user.message to a session.
func (d *Daemon) Send(ctx context.Context, sessionID, text, author string) (engine.Event, error) {
	var ev engine.Event
	err := d.call(ctx, http.MethodPost, "/v1/sessions/"+url.PathEscape(sessionID)+"/events",
		map[string]string{"type": engine.EventUserMessage, "text": text, "author": author}, &ev)
	return ev, err
}

// Resume resets an interrupted or failed session at its checkpoint.
func (d *Daemon) Resume(ctx context.Context, sessionID string) (engine.Session, error) {
	var s engine.Session
	err := d.call(ctx, http.MethodPost, "/v1/sessions/"+url.PathEscape(sessionID)+"/resume", nil, &s)
	return s, err
}

// Cancel stops a session's running turn and closes its open question.
func (d *Daemon) Cancel(ctx context.Context, sessionID string) (engine.Session, error) {
	var s engine.Session
	err := d.call(ctx, http.MethodPost, "/v1/sessions/"+url.PathEscape(sessionID)+"/cancel", nil, &s)
	return s, err
}

// Compact compacts a session's context now (POST /v1/sessions/{id}/compact).
func (d *Daemon) Compact(ctx context.Context, sessionID string) (engine.ContextCompacted, error) {
	var c engine.ContextCompacted
	err := d.call(ctx, http.MethodPost, "/v1/sessions/"+url.PathEscape(sessionID)+"/compact", nil, &c)
	return c, err
}
