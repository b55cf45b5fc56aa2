package api

import (
	"context"
	"net/http"
	"time"
)

// Schedules is what the schedule routes ask of the scheduler.
type Schedules interface {
	// Status describes every configured schedule, in config order.
	Status(ctx context.Context) ([]ScheduleStatus, error)
	// RunNow runs a schedule at once, enabled or not.
	RunNow(ctx context.Context, name string) (ScheduleRun, error)
}

// ScheduleStatus is one schedule as GET /v1/schedules shows it: its config,
// its next fire time (in its zone; nil when disabled or when the expression
// never matches again) and its latest runs, newest first.
type ScheduleStatus struct {
	Name     string        `json:"name"`
	Cron     string        `json:"cron"`
	Timezone string        `json:"timezone"`
	Agent    string        `json:"agent"`
	Enabled  bool          `json:"enabled"`
	Overlap  string        `json:"overlap"`
	PostTo   *PostTo       `json:"post_to,omitempty"`
	NextFire *time.Time    `json:"next_fire"`
	LastRuns []ScheduleRun `json:"last_runs"`
}

// PostTo is a schedule's post_to.
type PostTo struct {
	SlackChannel string `json:"slack_channel,omitempty"`
	LinearIssue  string `json:"linear_issue,omitempty"`
}

// ScheduleRun is one occurrence of a schedule: its fire time (in the
// schedule's zone), what triggered it, the session it started and how it
// ended. Status is running, completed, failed, interrupted or skipped.
type ScheduleRun struct {
	Schedule  string    `json:"schedule"`
	FireTime  time.Time `json:"fire_time"`
	Trigger   string    `json:"trigger"` // cron | manual
	SessionID string    `json:"session_id,omitempty"`
	Status    string    `json:"status"`
	Outcome   string    `json:"outcome,omitempty"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// listSchedules answers GET /v1/schedules.
func (a *Server) listSchedules(w http.ResponseWriter, r *http.Request) {
	list, err := a.schedules.Status(r.Context())
	if err != nil {
		writeError(w, r, a.log, err)
		return
	}
	if list == nil {
		list = []ScheduleStatus{}
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
