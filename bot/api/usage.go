package api

import (
	"context"
	"net/http"
	"time"

	"brain/bot/config"
	"brain/engine"
)

// Usage is the "usage" of GET /v1/sessions/{id}: the tokens the session's
// model calls used, summed from its log. input_tokens is all the input;
// cache_read_input_tokens of it were read from the provider's prompt cache
// and cache_creation_input_tokens written to it; uncached_input_tokens is
// the rest. cost_usd is the estimate from models.NAME.price, absent when
// the agent's model has no price.
type Usage struct {
	InputTokens         int64    `json:"input_tokens"`
	UncachedInputTokens int64    `json:"uncached_input_tokens"`
	CacheReadTokens     int64    `json:"cache_read_input_tokens"`
	CacheWriteTokens    int64    `json:"cache_creation_input_tokens"`
	OutputTokens        int64    `json:"output_tokens"`
	CostUSD             *float64 `json:"cost_usd,omitempty"`
}

// SessionWithUsage is the body of GET /v1/sessions/{id}.
type SessionWithUsage struct {
	engine.Session
	Usage Usage `json:"usage"`
}

// usageOf is u as the API shows it, priced by price when set.
func usageOf(u engine.Usage, price *config.PriceConfig) Usage {
	out := Usage{
		InputTokens: u.InputTokens, UncachedInputTokens: u.UncachedInputTokens(),
		CacheReadTokens: u.CacheReadTokens, CacheWriteTokens: u.CacheWriteTokens, OutputTokens: u.OutputTokens,
	}
	if price != nil {
		cost := price.Cost(out.UncachedInputTokens, u.CacheReadTokens, u.CacheWriteTokens, u.OutputTokens)
		out.CostUSD = &cost
	}
	return out
}

func (a *Server) getSession(w http.ResponseWriter, r *http.Request) {
	s, err := a.engine.Session(r.Context(), r.PathValue("id"))
	if err != nil {
		writeError(w, r, a.log, err)
		return
	}
	u, err := a.engine.SessionUsage(r.Context(), s.ID)
	if err != nil {
		writeError(w, r, a.log, err)
		return
	}
	writeJSON(w, http.StatusOK, SessionWithUsage{Session: s, Usage: usageOf(u, a.prices[s.Agent])})
}

// compactTimeout bounds a forced compaction: one model call.
const compactTimeout = 5 * time.Minute

// compact is POST /v1/sessions/{id}/compact: the context.compacted payload.
func (a *Server) compact(w http.ResponseWriter, r *http.Request) {
	ctx, stop := context.WithTimeout(r.Context(), compactTimeout)
	defer stop()
	c, err := a.engine.Compact(ctx, r.PathValue("id"))
	if err != nil {
		writeError(w, r, a.log, err)
		return
	}
	writeJSON(w, http.StatusOK, c)
}
