package durable_test

import (
	"errors"
	"testing"
	"time"

	"brain/engine"
	"brain/engine/durable"
)

// TestChecks pins the contract errors the stores return for a schedule run
// or a Linear grant they must not write.
func TestChecks(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	run := durable.ScheduleRun{Schedule: "daily", FireTime: now, Status: durable.RunRunning, UpdatedAt: now}
	with := func(f func(r *durable.ScheduleRun)) durable.ScheduleRun {
		r := run
		f(&r)
		return r
	}
	tok := durable.LinearToken{OrganizationID: "org", UpdatedAt: now}
	cases := []struct {
		name string
		err  error
		want string // "" means accepted
	}{
		{"run", run.Validate("update run"), ""},
		{"run without schedule", with(func(r *durable.ScheduleRun) { r.Schedule = "" }).Validate("update run"),
			"update run: empty schedule"},
		{"run without fire time", with(func(r *durable.ScheduleRun) { r.FireTime = time.Time{} }).Validate("finish run"),
			"finish run daily: zero fire time"},
		{"run status", with(func(r *durable.ScheduleRun) { r.Status = "done" }).Validate("update run"),
			`update run daily: unknown status "done"`},
		{"run without updated time", with(func(r *durable.ScheduleRun) { r.UpdatedAt = time.Time{} }).Validate("update run"),
			"update run daily: zero updated time"},
		{"claim", run.ValidateClaim(), ""},
		{"claim manual", with(func(r *durable.ScheduleRun) { r.Trigger = durable.TriggerManual }).ValidateClaim(), ""},
		{"claim trigger", with(func(r *durable.ScheduleRun) { r.Trigger = "webhook" }).ValidateClaim(),
			`claim run daily: unknown trigger "webhook"`},
		{"claim status", with(func(r *durable.ScheduleRun) { r.Status = "" }).ValidateClaim(),
			`claim run daily: unknown status ""`},

		{"token", tok.Validate(), ""},
		{"revoked token", durable.LinearToken{OrganizationID: "org", Status: durable.LinearRevoked, UpdatedAt: now}.Validate(), ""},
		{"token without organization", durable.LinearToken{UpdatedAt: now}.Validate(),
			"save linear token: empty organization id"},
		{"token status", durable.LinearToken{OrganizationID: "org", Status: "gone", UpdatedAt: now}.Validate(),
			`save linear token org: unknown status "gone"`},
		{"token without updated time", durable.LinearToken{OrganizationID: "org"}.Validate(),
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
