package web

import (
	"net/http"
	"strconv"
)

type statusView struct {
	Sections []Section
}

// statusPage shows the turns and what the StatusSource reports.
func (s *Server) statusPage(w http.ResponseWriter, r *http.Request, v visitor) {
	st := s.cfg.Engine.Stats()
	vw := statusView{Sections: []Section{{Title: "Turns", State: "ok", Rows: []Row{
		{Label: "Running", Value: strconv.Itoa(st.RunningTurns)},
		{Label: "Queued", Value: strconv.Itoa(st.QueuedTurns)},
	}}}}
	if s.cfg.Status != nil {
		vw.Sections = append(vw.Sections, s.cfg.Status.StatusSections(r.Context())...)
	}
	s.render(w, r, http.StatusOK, "status", v, vw)
}
