package store_test

import (
	"errors"
	"testing"
	"time"

	"brain/engine"
	"brain/store"
)

// TestChecks pins the contract errors the stores return for a schedule run
// or a Linear grant they must not write.
func TestChecks(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	run := store.ScheduleRun{Schedule: "daily", FireTime: now, Status: store.RunRunning, UpdatedAt: now}
	with := func(f func(r *store.ScheduleRun)) store.ScheduleRun {
		r := run
		f(&r)
		return r
	}
	tok := store.LinearToken{OrganizationID: "org", UpdatedAt: now}
	cases := []struct {
		name string
		err  error
		want string // "" means accepted
	}{
		{"run", run.Validate("update run"), ""},
		{"run without schedule", with(func(r *store.ScheduleRun) { r.Schedule = "" }).Validate("update run"),
			"update run: empty schedule"},
		{"run without fire time", with(func(r *store.ScheduleRun) { r.FireTime = time.Time{} }).Validate("finish run"),
			"finish run daily: zero fire time"},
		{"run status", with(func(r *store.ScheduleRun) { r.Status = "done" }).Validate("update run"),
			`update run daily: unknown status "done"`},
		{"run without updated time", with(func(r *store.ScheduleRun) { r.UpdatedAt = time.Time{} }).Validate("update run"),
			"update run daily: zero updated time"},
		{"claim", run.ValidateClaim(), ""},
		{"claim manual", with(func(r *store.ScheduleRun) { r.Trigger = store.TriggerManual }).ValidateClaim(), ""},
		{"claim trigger", with(func(r *store.ScheduleRun) { r.Trigger = "webhook" }).ValidateClaim(),
			`claim run daily: unknown trigger "webhook"`},
		{"claim status", with(func(r *store.ScheduleRun) { r.Status = "" }).ValidateClaim(),
			`claim run daily: unknown status ""`},

		{"token", tok.Validate(), ""},
		{"revoked token", store.LinearToken{OrganizationID: "org", Status: store.LinearRevoked, UpdatedAt: now}.Validate(), ""},
		{"token without organization", store.LinearToken{UpdatedAt: now}.Validate(),
			"save linear token: empty organization id"},
		{"token status", store.LinearToken{OrganizationID: "org", Status: "gone", UpdatedAt: now}.Validate(),
			`save linear token org: unknown status "gone"`},
		{"token without updated time", store.LinearToken{OrganizationID: "org"}.Validate(),
			"save linear token org: zero updated time"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.want == "" {
				if tc.err != nil {
					t.Fatalf("err = %v, want nil", tc.err)
				}
				return
			}
			if !errors.Is(tc.err, engine.ErrInvariant) {
				t.Fatalf("err = %v, want ErrInvariant", tc.err)
			}
			if got, want := tc.err.Error(), engine.ErrInvariant.Error()+": "+tc.want; got != want {
				t.Errorf("err = %q, want %q", got, want)
			}
		})
	}
}
