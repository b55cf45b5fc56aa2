package main

import (
	"bufio"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// metricsSnapshot is what the intake reads from brain's /metrics: how far
// the acknowledged mentions got.
type metricsSnapshot struct {
	sessions int64 // brain_sessions_created_total
	inputs   int64 // brain_inputs_total
	turns    int64 // brain_turns_total, every outcome
	inbox    int64 // brain_inbox_depth, every source
}

var metricsClient = &http.Client{Timeout: 30 * time.Second}

// scrape reads brain's Prometheus text exposition at url.
func scrape(url string) (metricsSnapshot, error) {
	var m metricsSnapshot
	resp, err := metricsClient.Get(url)
	if err != nil {
		return m, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return m, fmt.Errorf("GET %s: HTTP %d", url, resp.StatusCode)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			continue
		}
		name, rest, ok := strings.Cut(line, " ")
		if !ok {
			continue
		}
		if i := strings.IndexByte(name, '{'); i >= 0 {
			// A label value may hold a space: the value is the last field.
			name = name[:i]
			rest = line[strings.LastIndexByte(line, ' ')+1:]
		}
		var dst *int64
		switch name {
		case "brain_sessions_created_total":
			dst = &m.sessions
		case "brain_inputs_total":
			dst = &m.inputs
		case "brain_turns_total":
			dst = &m.turns
		case "brain_inbox_depth":
			dst = &m.inbox
		default:
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(rest), 64)
		if err != nil {
			return m, fmt.Errorf("metrics line %q: %w", line, err)
		}
		*dst += int64(v)
	}
	return m, sc.Err()
}
