package web

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"brain/engine"
)

// liveView is what a live stream keeps between batches: the session (for
// the header it sends again), and in the trace view the trace of the
// turns it sends again as they change.
type liveView struct {
	s      *Server
	r      *http.Request
	v      visitor
	ss     engine.Session
	tracer *tracer // nil: the raw event log
}

// liveTraceEvents bounds the events of the last turn a trace stream reads
// to rebuild it.
const liveTraceEvents = 4000

// liveTraceEntries is how many trace entries a stream keeps to update.
const liveTraceEntries = 64

func (s *Server) newLiveView(r *http.Request, v visitor, ss engine.Session, after int64) (*liveView, error) {
	lv := &liveView{s: s, r: r, v: v, ss: ss}
	q := r.URL.Query()
	if q.Get("view") != "trace" {
		return lv, nil
	}
	lv.tracer = newTracer(s.pricer(ss.Agent))
	// The turn the page showed last may still change: rebuild it from
	// its start (the page says where), up to where the page stopped.
	from, err := strconv.ParseInt(q.Get("turn"), 10, 64)
	if err != nil || from < 0 || from > after || after-from > liveTraceEvents {
		return lv, nil
	}
	for from < after {
		evs, err := s.cfg.Engine.Events(r.Context(), ss.ID, from, min(summaryPage, int(after-from)))
		if err != nil {
			return nil, err
		}
		if len(evs) == 0 {
			break
		}
		for _, ev := range evs {
			lv.tracer.add(ev)
		}
		from = evs[len(evs)-1].Seq
	}
	return lv, nil
}

// write writes the server-sent events for new events evs: each as an
// "item" (the raw log) or the trace entries they changed as "entry"
// events, then the header when the status or usage changed.
func (lv *liveView) write(ctx context.Context, buf *bytes.Buffer, evs []engine.Event) error {
	headerChanged := false
	var changed []*traceEntry
	for _, ev := range evs {
		if ev.Type == engine.EventSessionStatus || ev.Type == engine.EventTurnCompleted {
			headerChanged = true
		}
		if lv.tracer == nil {
			if err := lv.s.writeItem(buf, ev); err != nil {
				return err
			}
			continue
		}
		if e := lv.tracer.add(ev); e != nil && !containsEntry(changed, e) {
			changed = append(changed, e)
		}
		if ev.Type == engine.EventSessionStatus {
			writeStatus(buf, ev)
		}
	}
	for _, e := range changed {
		h, err := lv.s.pages.renderEntry(e)
		if err != nil {
			return err
		}
		writeData(buf, "entry", string(h))
	}
	if lv.tracer != nil {
		lv.tracer.trim(liveTraceEntries)
	}
	if len(evs) > 0 {
		fmt.Fprintf(buf, "id: %d\nevent: skip\ndata: %d\n\n", evs[len(evs)-1].Seq, evs[len(evs)-1].Seq)
	}
	if !headerChanged {
		return nil
	}
	ss, err := lv.s.cfg.Engine.Session(ctx, lv.ss.ID)
	if err != nil {
		return err
	}
	lv.ss = ss
	var h bytes.Buffer
	if err := lv.s.pages.item.ExecuteTemplate(&h, "sessionHeader", lv.s.header(lv.r, lv.v, ss)); err != nil {
		return err
	}
	writeData(buf, "header", h.String())
	return nil
}

func containsEntry(list []*traceEntry, e *traceEntry) bool {
	for _, x := range list {
		if x == e {
			return true
		}
	}
	return false
}

// writeData writes one server-sent event of HTML, a line per data field
// (a CR would end a line early; HTML reads it as a newline anyway).
func writeData(buf *bytes.Buffer, event, html string) {
	fmt.Fprintf(buf, "event: %s\n", event)
	for _, line := range strings.Split(strings.ReplaceAll(html, "\r", ""), "\n") {
		fmt.Fprintf(buf, "data: %s\n", line)
	}
	buf.WriteString("\n")
}

// writeStatus writes a "status" event when ev is a status change.
func writeStatus(buf *bytes.Buffer, ev engine.Event) {
	if p, err := ev.Decode(); err == nil {
		if st, ok := p.(engine.SessionStatus); ok {
			fmt.Fprintf(buf, "event: status\ndata: %s\n\n", st.Status)
		}
	}
}
