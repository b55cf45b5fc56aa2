package web

import (
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"brain/engine"
	"brain/store"
)

// The sessions list and its search: the filters and the words are the
// database's to match (store.SessionSearch, with indexes), and paging
// is by cursor, so the list is right and quick at any number of
// sessions.

type sessionsView struct {
	Rows []sessionRow
	// The query as the form shows it.
	Status, Origin, Agent, Person, Since, Until, Text string
	Statuses                                          []engine.Status
	Origins                                           []engine.Origin
	Agents                                            []string
	// PersonFixed: a person sees only their own sessions, so the person
	// filter is theirs.
	PersonFixed  bool
	Filtered     bool
	First, Next  string
	CanStart     bool
	DefaultAgent string
}

type sessionRow struct {
	engine.Session
	Title      string
	OriginLink string
}

// titleEvents is how many of a session's first events are read for its
// title (its first message).
const titleEvents = 8

// dateLayout is the date filters' form, as <input type=date> sends it.
const dateLayout = "2006-01-02"

func (s *Server) sessionsPage(w http.ResponseWriter, r *http.Request, v visitor) {
	q := r.URL.Query()
	vw := sessionsView{Status: q.Get("status"), Origin: q.Get("origin"), Agent: q.Get("agent"), Person: strings.TrimSpace(q.Get("person")),
		Since: q.Get("since"), Until: q.Get("until"), Text: strings.TrimSpace(q.Get("q")),
		Statuses: sessionStatuses, Origins: s.origins(), Agents: s.cfg.Agents,
		CanStart: len(s.cfg.Agents) > 0, DefaultAgent: s.cfg.DefaultAgent}
	sq, msg := vw.query(q.Get("cursor"))
	if msg != "" {
		s.fail(w, r, v, http.StatusBadRequest, msg)
		return
	}
	// Only the sessions v may see: those they started or wrote in
	// (access.go), which is what the person filter selects.
	if !s.admin(r, v) {
		sq.Person, vw.Person, vw.PersonFixed = v.by, v.by, true
		if v.by == "" {
			s.render(w, r, http.StatusOK, "sessions", v, vw)
			return
		}
	}
	vw.Filtered = sq.Status != "" || sq.Origin != "" || sq.Agent != "" || (sq.Person != "" && !vw.PersonFixed) ||
		!sq.Since.IsZero() || !sq.Until.IsZero() || sq.Text != ""
	list, next, err := s.cfg.Search.ListSessions(r.Context(), sq)
	if err != nil {
		var ee *engine.Error
		if errors.As(err, &ee) {
			s.engineError(w, r, v, err)
			return
		}
		s.internal(w, r, v, err)
		return
	}
	for _, ss := range list {
		row := sessionRow{Session: ss, OriginLink: s.originLink(ss)}
		var err error
		if row.Title, err = s.title(r, ss); err != nil {
			s.internal(w, r, v, err)
			return
		}
		vw.Rows = append(vw.Rows, row)
	}
	if sq.Cursor != "" {
		vw.First = vw.link("")
	}
	if next != "" {
		vw.Next = vw.link(next)
	}
	s.render(w, r, http.StatusOK, "sessions", v, vw)
}

// query reads the form into a store query; msg says what is wrong with
// it, for people.
func (vw *sessionsView) query(cursor string) (q store.SessionQuery, msg string) {
	q = store.SessionQuery{Origin: engine.Origin(vw.Origin), Agent: vw.Agent, Person: vw.Person, Cursor: cursor, Limit: pageSize}
	if vw.Status != "" {
		if !slices.Contains(sessionStatuses, engine.Status(vw.Status)) {
			return q, "Unknown status " + strconv.Quote(vw.Status) + "."
		}
		q.Status = engine.Status(vw.Status)
	}
	if len(vw.Text) > maxSearch || len(vw.Person) > maxSearch || len(vw.Agent) > maxSearch || len(vw.Origin) > maxSearch {
		return q, "A search or filter is at most 200 bytes."
	}
	q.Text = vw.Text
	for _, d := range []struct {
		text string
		to   *time.Time
		add  int
	}{{vw.Since, &q.Since, 0}, {vw.Until, &q.Until, 1}} {
		if d.text == "" {
			continue
		}
		t, err := time.Parse(dateLayout, d.text)
		if err != nil {
			return q, "Dates are written 2006-01-02."
		}
		// "until" includes its day.
		*d.to = t.AddDate(0, 0, d.add)
	}
	return q, ""
}

// maxSearch caps the search text and each filter.
const maxSearch = 200

// link is this list's URL with another cursor ("" the first page).
func (vw *sessionsView) link(cursor string) string {
	u := url.Values{}
	for k, val := range map[string]string{"status": vw.Status, "origin": vw.Origin, "agent": vw.Agent,
		"since": vw.Since, "until": vw.Until, "q": vw.Text, "cursor": cursor} {
		if val != "" {
			u.Set(k, val)
		}
	}
	if vw.Person != "" && !vw.PersonFixed {
		u.Set("person", vw.Person)
	}
	if len(u) == 0 {
		return "/sessions"
	}
	return "/sessions?" + u.Encode()
}
