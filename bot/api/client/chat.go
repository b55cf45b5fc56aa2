package client

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"brain/bot/api"
	"brain/engine"
)

// CreateSession starts an interactive session with agent, started by
// startedBy ("" = the API key's name).
func (d *Daemon) CreateSession(ctx context.Context, agent, startedBy string) (engine.Session, error) {
	var out api.SessionResponse
	err := d.call(ctx, http.MethodPost, "/v1/sessions", map[string]any{"agent": agent, "interactive": true, "started_by": startedBy}, &out)
	return out.Session, err
}

// SessionApprovals lists one session's approvals with status ("" = all),
// newest first.
func (d *Daemon) SessionApprovals(ctx context.Context, sessionID, status string) ([]engine.Approval, error) {
	return d.listApprovals(ctx, url.Values{"session_id": {sessionID}}, status)
}

// Session returns one session.
func (d *Daemon) Session(ctx context.Context, id string) (engine.Session, error) {
	var s engine.Session
	err := d.call(ctx, http.MethodGet, "/v1/sessions/"+url.PathEscape(id), nil, &s)
	return s, err
}

// SendInput posts a user.message with in's text, author and answer.
func (d *Daemon) SendInput(ctx context.Context, sessionID string, in engine.Input) (engine.Event, error) {
	body := map[string]any{"type": engine.EventUserMessage, "text": in.Text, "author": in.Author}
	if in.Answer != nil {
		body["answer"] = in.Answer
	}
	var ev engine.Event
	err := d.call(ctx, http.MethodPost, "/v1/sessions/"+url.PathEscape(sessionID)+"/events", body, &ev)
	return ev, err
}

// ResumeRetry resumes the session and queues the input its stop left
// unanswered again; it returns those inputs' events.
func (d *Daemon) ResumeRetry(ctx context.Context, sessionID string) ([]engine.Event, error) {
	var out api.ResumeResponse
	err := d.call(ctx, http.MethodPost, "/v1/sessions/"+url.PathEscape(sessionID)+"/resume", map[string]bool{"retry": true}, &out)
	return out.Retried, err
}

// Events returns the session's stored events after after.
func (d *Daemon) Events(ctx context.Context, sessionID string, after int64) ([]engine.Event, error) {
	var out struct {
		Events []engine.Event `json:"events"`
	}
	err := d.call(ctx, http.MethodGet, "/v1/sessions/"+url.PathEscape(sessionID)+"/events?after="+strconv.FormatInt(after, 10), nil, &out)
	return out.Events, err
}

// StreamItem is one message of a session's event stream: a stored event,
// or (Delta set) text the model is writing.
type StreamItem struct {
	Event *engine.Event
	Delta *engine.Delta
}

// Stream follows a session's events after after, with the text being
// written (GET /v1/sessions/{id}/events as server-sent events with
// deltas=true), calling each for every item until ctx ends, the stream
// breaks or each returns false.
func (d *Daemon) Stream(ctx context.Context, sessionID string, after int64, each func(StreamItem) bool) error {
	path := "/v1/sessions/" + url.PathEscape(sessionID) + "/events?deltas=true&after=" + strconv.FormatInt(after, 10)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, d.base+path, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "text/event-stream")
	if d.key != "" {
		req.Header.Set("Authorization", "Bearer "+d.key)
	}
	// The stream outlives the client's request timeout; ctx ends it.
	resp, err := (&http.Client{Transport: d.http.Transport}).Do(req)
	if err != nil {
		return fmt.Errorf("stream session %s: %w", sessionID, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		raw, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
		var env api.ErrorEnvelope
		if json.Unmarshal(raw, &env) == nil && env.Error.Code != "" {
			return engine.Errorf(env.Error.Code, "%s", env.Error.Message)
		}
		return fmt.Errorf("stream session %s: %s", sessionID, resp.Status)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	var typ, data string
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if data != "" {
				item, err := streamItem(typ, data)
				if err != nil {
					return fmt.Errorf("stream session %s: %w", sessionID, err)
				}
				if !each(item) {
					return nil
				}
			}
			typ, data = "", ""
		case strings.HasPrefix(line, "event: "):
			typ = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			data += strings.TrimPrefix(line, "data: ")
		}
	}
	if err := sc.Err(); err != nil && ctx.Err() == nil {
		return fmt.Errorf("stream session %s: %w", sessionID, err)
	}
	return ctx.Err()
}

func streamItem(typ, data string) (StreamItem, error) {
	if typ == engine.EventAgentMessageDelta {
		var d engine.Delta
		err := json.Unmarshal([]byte(data), &d)
		return StreamItem{Delta: &d}, err
	}
	var ev engine.Event
	err := json.Unmarshal([]byte(data), &ev)
	return StreamItem{Event: &ev}, err
}
