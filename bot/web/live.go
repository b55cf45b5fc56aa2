package web

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"brain/engine"
	"brain/tools"
)

// liveHeartbeat keeps idle streams (and proxies) alive.
const liveHeartbeat = 15 * time.Second

// live streams a session's new timeline entries as server-sent events:
// "item" events carry an entry's HTML, rendered by the same template as
// the page (so it is escaped the same way), "status" events the session's
// new status, "delta" events the text the model is writing (JSON, shown
// as text by the page until the committed agent.message replaces it).
// Deltas have no id, so the EventSource reconnects with the Last-Event-ID
// of the last stored event and nothing unstored is replayed.
func (s *Server) live(w http.ResponseWriter, r *http.Request, v visitor) {
	ctx := r.Context()
	ss, ok := s.session(w, r, v)
	if !ok {
		return
	}
	id := ss.ID
	after, _ := strconv.ParseInt(r.URL.Query().Get("after"), 10, 64)
	if last, err := strconv.ParseInt(r.Header.Get("Last-Event-ID"), 10, 64); err == nil {
		after = last
	}
	after = max(after, 0)
	// Watch before the stream opens: a turn started once the page is live
	// streams its text here from its first word.
	feed := s.cfg.Engine.Deltas(id)
	defer feed.Close()
	lv, err := s.newLiveView(r, v, ss, after)
	if err != nil {
		s.internal(w, r, v, err)
		return
	}
	rc := http.NewResponseController(w)
	extend := func() {
		if s.cfg.WriteTimeout > 0 {
			_ = rc.SetWriteDeadline(time.Now().Add(s.cfg.WriteTimeout))
		}
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	extend()
	w.WriteHeader(http.StatusOK)
	if err := rc.Flush(); err != nil {
		return
	}
	heartbeat := time.NewTicker(liveHeartbeat)
	defer heartbeat.Stop()
	for {
		changed := s.cfg.Engine.Changed(id) // before reading, so no commit is missed
		// The deltas before the events, so a round's text goes out before
		// the agent.message that replaces it.
		deltas := feed.Take()
		evs, err := s.cfg.Engine.Events(ctx, id, after, 500)
		if err != nil {
			if ctx.Err() == nil {
				s.log.Error("console live timeline", tools.LogSession, id, tools.LogErr, err)
			}
			return
		}
		extend()
		var buf bytes.Buffer
		for _, d := range deltas {
			writeDelta(&buf, d)
		}
		if err := lv.write(ctx, &buf, evs); err != nil {
			if ctx.Err() == nil {
				s.log.Error("render console timeline item", tools.LogSession, id, tools.LogErr, err)
			}
			return
		}
		if len(evs) > 0 {
			after = evs[len(evs)-1].Seq
		}
		if buf.Len() > 0 {
			if _, err := w.Write(buf.Bytes()); err != nil {
				return
			}
			if err := rc.Flush(); err != nil {
				return
			}
		}
		if len(evs) == 500 {
			continue
		}
		select {
		case <-changed:
		case <-feed.Ready():
		case <-heartbeat.C:
			extend()
			if _, err := fmt.Fprint(w, ": keep-alive\n\n"); err != nil {
				return
			}
			if err := rc.Flush(); err != nil {
				return
			}
		case <-ctx.Done():
			return
		case <-s.cfg.Done:
			return
		}
	}
}

// writeItem writes ev's server-sent events to buf.
func (s *Server) writeItem(buf *bytes.Buffer, ev engine.Event) error {
	html, ok, err := s.pages.renderItem(ev)
	if err != nil {
		return err
	}
	if !ok {
		fmt.Fprintf(buf, "id: %d\nevent: skip\ndata: %d\n\n", ev.Seq, ev.Seq)
		return nil
	}
	fmt.Fprintf(buf, "id: %d\nevent: item\n", ev.Seq)
	// A CR would end an event's line early; HTML reads it as a newline
	// anyway.
	for _, line := range strings.Split(strings.ReplaceAll(string(html), "\r", ""), "\n") {
		fmt.Fprintf(buf, "data: %s\n", line)
	}
	buf.WriteString("\n")
	if ev.Type == engine.EventSessionStatus {
		if p, err := ev.Decode(); err == nil {
			if st, ok := p.(engine.SessionStatus); ok {
				fmt.Fprintf(buf, "event: status\ndata: %s\n\n", st.Status)
			}
		}
	}
	return nil
}

// liveDelta is a delta as the page reads it.
type liveDelta struct {
	Turn  string `json:"turn"`
	Round int    `json:"round"`
	Text  string `json:"text"`
}

// writeDelta writes d as a "delta" event to buf. JSON keeps it on one
// line and escapes <, > and &, and the page sets it as text, never HTML.
func writeDelta(buf *bytes.Buffer, d engine.Delta) {
	data, _ := json.Marshal(liveDelta{Turn: d.TurnID, Round: d.Round, Text: d.Text}) // cannot fail: strings and an int
	fmt.Fprintf(buf, "event: delta\ndata: %s\n\n", data)
}
