package web

import (
	"net/http"
	"net/url"

	"brain/bot/schedule"
	"brain/tools"
)

type schedulesView struct {
	Schedules []schedule.Status
	Notice    string
}

func (s *Server) schedulesPage(w http.ResponseWriter, r *http.Request, v visitor) {
	vw := schedulesView{Notice: r.URL.Query().Get("notice")}
	if s.cfg.Schedules != nil {
		list, err := s.cfg.Schedules.Status(r.Context())
		if err != nil {
			s.internal(w, r, v, err)
			return
		}
		vw.Schedules = list
	}
	s.render(w, r, http.StatusOK, "schedules", v, vw)
}

// runSchedule runs a schedule now and opens the session it started.
func (s *Server) runSchedule(w http.ResponseWriter, r *http.Request, v visitor) {
	if s.cfg.Schedules == nil {
		s.fail(w, r, v, http.StatusNotFound, "No schedules are configured.")
		return
	}
	run, err := s.cfg.Schedules.RunNow(r.Context(), r.PathValue("name"))
	if err != nil {
		s.engineError(w, r, v, err)
		return
	}
	s.log.Info("console ran a schedule", tools.LogSchedule, run.Schedule, tools.LogWho, v.name)
	if run.SessionID != "" {
		http.Redirect(w, r, "/sessions/"+url.PathEscape(run.SessionID), http.StatusSeeOther)
		return
	}
	http.Redirect(w, r, "/schedules?notice="+url.QueryEscape(run.Schedule+": "+run.Status), http.StatusSeeOther)
}
