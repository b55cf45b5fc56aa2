package api

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"brain/engine"
	"brain/tools"
)

// sseHeartbeat keeps idle streams alive through proxies.
const sseHeartbeat = 15 * time.Second

// listEvents answers GET /v1/sessions/{id}/events: a JSON page of events
// after ?after=SEQ, or, with Accept: text/event-stream, a stream that starts
// after Last-Event-ID (or ?after) and follows new events.
func (a *Server) listEvents(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	after, err := parseSeq(r.URL.Query().Get("after"), "after")
	if err != nil {
		writeError(w, r, a.log, err)
		return
	}
	limit := 1000
	if v := r.URL.Query().Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 10000 {
			writeError(w, r, a.log, engine.Errorf(engine.CodeInvalid, "limit must be 1..10000"))
			return
		}
		limit = n
	}
	if strings.Contains(r.Header.Get("Accept"), "text/event-stream") {
		if v := r.Header.Get("Last-Event-ID"); v != "" {
			if after, err = parseSeq(v, "Last-Event-ID"); err != nil {
				writeError(w, r, a.log, err)
				return
			}
		}
		deltas, err := parseBool(r.URL.Query().Get("deltas"), "deltas")
		if err != nil {
			writeError(w, r, a.log, err)
			return
		}
		a.streamEvents(w, r, id, after, deltas)
		return
	}
	evs, err := a.engine.Events(r.Context(), id, after, limit)
	if err != nil {
		writeError(w, r, a.log, err)
		return
	}
	if evs == nil {
		evs = []engine.Event{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"events": evs})
}

func parseSeq(v, name string) (int64, error) {
	if v == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, engine.Errorf(engine.CodeInvalid, "%s must be a non-negative event sequence number", name)
	}
	return n, nil
}

func parseBool(v, name string) (bool, error) {
	switch v {
	case "", "false", "0":
		return false, nil
	case "true", "1":
		return true, nil
	}
	return false, engine.Errorf(engine.CodeInvalid, "%s must be true or false", name)
}

// streamEvents streams the session's events after after; with deltas, the
// text the model is writing too, as agent.message.delta events without an
// id, so Last-Event-ID keeps naming the last stored event and a reconnect
// replays only what is kept.
func (a *Server) streamEvents(w http.ResponseWriter, r *http.Request, id string, after int64, deltas bool) {
	ctx := r.Context()
	// Check the session before committing to a stream, so a bad id is a 404.
	if _, err := a.engine.Session(ctx, id); err != nil {
		writeError(w, r, a.log, err)
		return
	}
	flusher, ok := w.(http.Flusher)
	if !ok {
		writeError(w, r, a.log, fmt.Errorf("response writer cannot stream"))
		return
	}
	// The server's write timeout bounds ordinary requests; a stream is meant
	// to outlive it. Its deadline moves before each write instead, so a
	// client that stops reading is still cut off. (Reading has no deadline
	// here: the server lifts it once the request is read.)
	rc := http.NewResponseController(w)
	extend := func() {
		if a.writeTimeout > 0 {
			_ = rc.SetWriteDeadline(time.Now().Add(a.writeTimeout))
		}
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	extend()
	w.WriteHeader(http.StatusOK)
	flusher.Flush()

	var feed *engine.DeltaFeed
	var ready <-chan struct{} // nil without deltas: never ready
	if deltas {
		feed = a.engine.WatchDeltas(id)
		defer feed.Close()
		ready = feed.Ready()
	}
	heartbeat := time.NewTicker(sseHeartbeat)
	defer heartbeat.Stop()
	for {
		// Take the wake-up channel before reading, so no commit is missed;
		// take the deltas before the events, so a round's deltas go out
		// before its agent.message.
		changed := a.engine.Changed(id)
		var ds []engine.Delta
		if feed != nil {
			ds = feed.Take()
		}
		extend()
		for _, d := range ds {
			data, _ := json.Marshal(d)
			if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", engine.EventAgentMessageDelta, data); err != nil {
				return
			}
		}
		evs, err := a.engine.Events(ctx, id, after, 500)
		if err != nil {
			if ctx.Err() == nil {
				a.log.Error("stream events", tools.LogRequestID, requestID(ctx), tools.LogSession, id, tools.LogErr, err)
			}
			return
		}
		extend()
		for _, ev := range evs {
			data, _ := json.Marshal(ev)
			if _, err := fmt.Fprintf(w, "id: %d\nevent: %s\ndata: %s\n\n", ev.Seq, ev.Type, data); err != nil {
				return
			}
			after = ev.Seq
		}
		flusher.Flush()
		if len(evs) == 500 {
			continue // more to send before waiting
		}
		select {
		case <-changed:
		case <-ready:
		case <-heartbeat.C:
			extend()
			if _, err := fmt.Fprint(w, ": keep-alive\n\n"); err != nil {
				return
			}
			flusher.Flush()
		case <-ctx.Done():
			return
		case <-a.done:
			return
		}
	}
}
