package schedule

import (
	"strings"
	"testing"
	"time"

	"brain/bot/config"
)

func entry(t *testing.T, spec, zone string) *scheduleEntry {
	t.Helper()
	entries, err := parseSchedules(&config.Config{Schedules: []config.ScheduleConfig{{Name: "s", Cron: spec, Timezone: zone}}})
	if err != nil {
		t.Fatal(err)
	}
	return entries[0]
}

func TestScheduler_FireTimesAcrossDST(t *testing.T) {
	cases := []struct {
		name, spec, zone, from string
		want                   []string
	}{
		{"spring: 02:30 does not exist, fires when the clock jumps", "30 2 * * *", "Europe/Paris", "2026-03-27T12:00:00+01:00",
			[]string{"2026-03-28T02:30:00+01:00", "2026-03-29T03:00:00+02:00", "2026-03-30T02:30:00+02:00"}},
		{"spring: 09:00 keeps local time", "0 9 * * *", "Europe/Paris", "2026-03-28T12:00:00+01:00",
			[]string{"2026-03-29T09:00:00+02:00", "2026-03-30T09:00:00+02:00"}},
		{"autumn: 02:30 happens twice, fires once", "30 2 * * *", "Europe/Paris", "2026-10-24T12:00:00+02:00",
			[]string{"2026-10-25T02:30:00+02:00", "2026-10-26T02:30:00+01:00"}},
		{"autumn: 09:00 keeps local time", "0 9 * * *", "Europe/Paris", "2026-10-24T12:00:00+02:00",
			[]string{"2026-10-25T09:00:00+01:00", "2026-10-26T09:00:00+01:00"}},
		{"autumn: started in the repeated hour after 02:30 fired", "30 2 * * *", "Europe/Paris", "2026-10-25T02:15:00+01:00",
			[]string{"2026-10-26T02:30:00+01:00"}},
		{"spring: hourly, the missing hour merges into the jump", "0 * * * *", "Europe/Paris", "2026-03-29T00:30:00+01:00",
			[]string{"2026-03-29T01:00:00+01:00", "2026-03-29T03:00:00+02:00", "2026-03-29T04:00:00+02:00"}},
		{"autumn: hourly, each local hour once", "0 * * * *", "Europe/Paris", "2026-10-25T01:30:00+02:00",
			[]string{"2026-10-25T02:00:00+02:00", "2026-10-25T03:00:00+01:00", "2026-10-25T04:00:00+01:00"}},
		{"New York spring", "30 2 * * *", "America/New_York", "2026-03-07T12:00:00-05:00",
			[]string{"2026-03-08T03:00:00-04:00", "2026-03-09T02:30:00-04:00"}},
		{"New York autumn", "30 1 * * *", "America/New_York", "2026-10-31T12:00:00-04:00",
			[]string{"2026-11-01T01:30:00-04:00", "2026-11-02T01:30:00-05:00"}},
		{"weekdays in UTC", "0 9 * * 1-5", "UTC", "2026-03-27T10:00:00Z",
			[]string{"2026-03-30T09:00:00Z", "2026-03-31T09:00:00Z"}},
		{"@every counts elapsed time", "@every 90m", "Europe/Paris", "2026-03-29T01:00:00+01:00",
			[]string{"2026-03-29T03:30:00+02:00", "2026-03-29T05:00:00+02:00"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := entry(t, c.spec, c.zone)
			at, err := time.Parse(time.RFC3339, c.from)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for range c.want {
				at = e.next(at)
				got = append(got, at.In(e.loc).Format(time.RFC3339))
			}
			if strings.Join(got, " ") != strings.Join(c.want, " ") {
				t.Fatalf("fire times\n got %v\nwant %v", got, c.want)
			}
		})
	}
}

func TestScheduler_DueRunsOnlyTheMostRecent(t *testing.T) {
	e := entry(t, "0 9 * * *", "Europe/Paris")
	loc := e.loc
	from := time.Date(2026, 3, 27, 12, 0, 0, 0, loc)
	at, n := e.due(from, time.Date(2026, 3, 30, 10, 0, 0, 0, loc))
	if n != 3 || !at.Equal(time.Date(2026, 3, 30, 9, 0, 0, 0, loc)) {
		t.Fatalf("due = %s, %d; want 2026-03-30 09:00, 3", at, n)
	}
	if at, n := e.due(from, from.Add(time.Hour)); !at.IsZero() || n != 0 {
		t.Fatalf("due with nothing due = %s, %d", at, n)
	}
	// A spec that never matches again has no next fire time.
	never := entry(t, "0 0 30 2 *", "UTC")
	if next := never.next(from); !next.IsZero() {
		t.Fatalf("next of 30 February = %s", next)
	}
}

// TestNextFire_EveryIsAnchored: the next fire of an @every schedule
// counts from its anchor (its last fire, or when the scheduler started),
// so looking again later shows the same time; cron expressions follow
// the clock.
func TestNextFire_EveryIsAnchored(t *testing.T) {
	e := entry(t, "@every 90m", "UTC")
	anchor := time.Date(2026, 3, 1, 8, 0, 0, 0, time.UTC)
	want := anchor.Add(90 * time.Minute)
	for _, look := range []time.Duration{time.Second, 10 * time.Minute, 89 * time.Minute} {
		if got := e.nextFire(anchor, anchor.Add(look)); !got.Equal(want) {
			t.Errorf("looked at +%v: next %v, want %v", look, got, want)
		}
	}
	// Occurrences passed while nobody fired them: the grid goes on.
	if got := e.nextFire(anchor, anchor.Add(200*time.Minute)); !got.Equal(anchor.Add(270 * time.Minute)) {
		t.Errorf("after missed occurrences: next %v, want %v", got, anchor.Add(270*time.Minute))
	}
	if got := e.nextFire(anchor, anchor.Add(90*time.Minute)); !got.Equal(anchor.Add(180 * time.Minute)) {
		t.Errorf("at an occurrence: next %v, want the one after", got)
	}
	c := entry(t, "0 9 * * *", "UTC")
	if got := c.nextFire(anchor, anchor.Add(time.Hour)); !got.Equal(time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)) {
		t.Errorf("cron: next %v", got)
	}
}
