package api

import (
	"context"
	"net/http"

	"brain/bot/schedule"
)

// Schedules is what the schedule routes ask of the scheduler. They answer
// with the scheduler's own views (schedule.Status, schedule.Run), so GET
// /v1/schedules and `brain schedules list` show the same thing.
type Schedules interface {
	// Status describes every configured schedule, in config order.
	Status(ctx context.Context) ([]schedule.Status, error)
	// RunNow runs a schedule at once, enabled or not.
	RunNow(ctx context.Context, name string) (schedule.Run, error)
}

// listSchedules answers GET /v1/schedules.
func (a *Server) listSchedules(w http.ResponseWriter, r *http.Request) {
	list, err := a.schedules.Status(r.Context())
	if err != nil {
		writeError(w, r, a.log, err)
		return
	}
	if list == nil {
		list = []schedule.Status{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"schedules": list})
}

// runSchedule answers POST /v1/schedules/{name}/run: 202 with the run.
func (a *Server) runSchedule(w http.ResponseWriter, r *http.Request) {
	run, err := a.schedules.RunNow(r.Context(), r.PathValue("name"))
	if err != nil {
		writeError(w, r, a.log, err)
		return
	}
	writeJSON(w, http.StatusAccepted, run)
}
