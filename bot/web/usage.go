package web

import (
	"cmp"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"brain/engine"
)

// The usage page: tokens and estimated cost per day, agent, person and
// platform, summed by the database from the turns' recorded usage
// (store.UsageReport), with a bar chart of the days drawn as inline SVG
// on the server (no script, no style attribute: the CSP holds).

// usageWindows are the periods the page offers, in days.
var usageWindows = []int{7, 30, 90}

type usageView struct {
	Days     int
	Windows  []int
	Since    time.Time
	Total    usageTotal
	ByDay    []usageTotal
	ByAgent  []usageTotal
	ByPerson []usageTotal
	ByOrigin []usageTotal
	Chart    chart
	Priced   bool
}

// usageTotal is one row of a breakdown: its key and sums.
type usageTotal struct {
	Key   string
	Turns int64
	engine.Usage
	Cost float64
}

func (s *Server) usagePage(w http.ResponseWriter, r *http.Request, v visitor) {
	if s.cfg.Usage == nil {
		s.fail(w, r, v, http.StatusNotFound, "This store keeps no usage report.")
		return
	}
	vw := usageView{Days: 30, Windows: usageWindows}
	if d, err := strconv.Atoi(r.URL.Query().Get("days")); err == nil && slices.Contains(usageWindows, d) {
		vw.Days = d
	}
	now := s.now().UTC()
	today := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	vw.Since = today.AddDate(0, 0, 1-vw.Days)
	rows, err := s.cfg.Usage.Usage(r.Context(), vw.Since, today.AddDate(0, 0, 1))
	if err != nil {
		s.internal(w, r, v, err)
		return
	}
	days := map[string]*usageTotal{}
	for i := range vw.Days {
		k := vw.Since.AddDate(0, 0, i).Format(dateLayout)
		vw.ByDay = append(vw.ByDay, usageTotal{Key: k})
		days[k] = &vw.ByDay[i]
	}
	agents, people, origins := map[string]*usageTotal{}, map[string]*usageTotal{}, map[string]*usageTotal{}
	for _, row := range rows {
		cost, priced := s.cost(row.Agent, row.Usage)
		vw.Priced = vw.Priced || priced
		add := func(t *usageTotal) {
			t.Turns += row.Turns
			t.Usage = t.Usage.Add(row.Usage)
			t.Cost += cost
		}
		add(&vw.Total)
		if d := days[row.Day]; d != nil {
			add(d)
		}
		add(entry(agents, row.Agent))
		add(entry(people, orDefault(row.Person, "(nobody: schedules, API)")))
		add(entry(origins, string(row.Origin)))
	}
	vw.ByAgent, vw.ByPerson, vw.ByOrigin = sorted(agents), sorted(people), sorted(origins)
	vw.Chart = barChart(vw.ByDay, vw.Priced)
	s.render(w, r, http.StatusOK, "usage", v, vw)
}

// cost is usage u's estimated cost with agent's model price; priced is
// false when it has none.
func (s *Server) cost(agent string, u engine.Usage) (cost float64, priced bool) {
	p := s.cfg.Prices[agent]
	if p == nil {
		return 0, false
	}
	return p.Cost(u.UncachedInputTokens(), u.CacheReadTokens, u.CacheWriteTokens, u.OutputTokens), true
}

func entry(m map[string]*usageTotal, key string) *usageTotal {
	t := m[key]
	if t == nil {
		t = &usageTotal{Key: key}
		m[key] = t
	}
	return t
}

// sorted lists m's totals, the most tokens first.
func sorted(m map[string]*usageTotal) []usageTotal {
	out := make([]usageTotal, 0, len(m))
	for _, t := range m {
		out = append(out, *t)
	}
	slices.SortFunc(out, func(a, b usageTotal) int {
		return cmp.Or(cmp.Compare(b.InputTokens+b.OutputTokens, a.InputTokens+a.OutputTokens), cmp.Compare(a.Key, b.Key))
	})
	return out
}

// chart is an SVG bar chart of the days: input and output tokens stacked.
type chart struct {
	Width, Height int
	Bars          []bar
	// Ticks are the horizontal grid lines with their labels.
	Ticks []tick
	Label string
}

type bar struct {
	X, W            int
	InY, InH        int
	OutY, OutH      int
	Title, DayLabel string
	ShowDay         bool
}

type tick struct {
	Y     int
	Label string
}

// Chart geometry: a plot area left of which the axis labels sit.
const (
	chartW, chartH    = 720, 220
	plotLeft, plotTop = 56, 10
	plotBottom        = 30
)

func barChart(days []usageTotal, priced bool) chart {
	c := chart{Width: chartW, Height: chartH, Label: fmt.Sprintf("Tokens per day over %d days", len(days))}
	var top int64
	for _, d := range days {
		top = max(top, d.InputTokens+d.OutputTokens)
	}
	top = niceCeil(top)
	plotH := chartH - plotTop - plotBottom
	scale := func(n int64) int { return int(n * int64(plotH) / top) }
	for i := range 5 {
		n := top * int64(i) / 4
		c.Ticks = append(c.Ticks, tick{Y: plotTop + plotH - scale(n), Label: compact(n)})
	}
	slot := (chartW - plotLeft) / max(len(days), 1)
	every := max(1, len(days)/8)
	for i, d := range days {
		inH, outH := scale(d.InputTokens), scale(d.OutputTokens)
		b := bar{X: plotLeft + i*slot + slot/8, W: max(slot*3/4, 1), InH: inH, OutH: outH,
			DayLabel: d.Key[5:], ShowDay: i%every == 0}
		b.InY = plotTop + plotH - inH
		b.OutY = b.InY - outH
		b.Title = fmt.Sprintf("%s: %s input, %s output tokens, %d turns", d.Key, compact(d.InputTokens), compact(d.OutputTokens), d.Turns)
		if priced {
			b.Title += fmt.Sprintf(", $%.2f", d.Cost)
		}
		c.Bars = append(c.Bars, b)
	}
	return c
}

// niceCeil rounds n up to 1, 2 or 5 times a power of ten (at least 10).
func niceCeil(n int64) int64 {
	step := int64(10)
	for {
		for _, m := range []int64{1, 2, 5} {
			if n <= step*m {
				return step * m
			}
		}
		step *= 10
	}
}

// compact writes a count for an axis: 950, 12k, 3.4M.
func compact(n int64) string {
	switch {
	case n >= 1e6:
		return strings.TrimSuffix(fmt.Sprintf("%.1f", float64(n)/1e6), ".0") + "M"
	case n >= 1e3:
		return strconv.FormatInt(n/1e3, 10) + "k"
	}
	return strconv.FormatInt(n, 10)
}
