package engine

import (
	"strings"
	"sync"
)

// The context budget. Before each model call the engine estimates the
// request's size in tokens without a tokenizer: bytes/3, which errs high
// for prose and code (about 4 bytes a token) and is closer for JSON, plus a
// little per message and per tool. Each answer's reported input tokens
// correct the estimate for that agent's model (sizer.calibrate), with a
// margin so the correction too errs high.

// defaultAnswerReserve is the part of the window kept for the answer when
// an agent does not say (Agent.MaxTokens).
const defaultAnswerReserve = 4096

// Overheads, in bytes, of the parts of a request besides their text: role
// markers, ids and the JSON around tool definitions, calls and results.
const (
	messageOverhead = 16
	toolOverhead    = 48
	callOverhead    = 32
)

// inputBudget is how many tokens a request may use: the window less the
// answer's reserve; zero means no budget (the window is unknown).
func (a *Agent) inputBudget() int {
	if a.ContextWindow <= 0 {
		return 0
	}
	reserve := a.MaxTokens
	if reserve <= 0 {
		reserve = defaultAnswerReserve
	}
	if b := a.ContextWindow - reserve; b > 0 {
		return b
	}
	return 1
}

// rawEstimate is the uncorrected size of req in tokens.
func rawEstimate(req ModelRequest) int {
	n := len(req.System)
	for _, t := range req.Tools {
		n += len(t.Name) + len(t.Description) + len(t.InputSchema) + toolOverhead
	}
	n += messagesBytes(req.Messages)
	return n/3 + 1
}

func messagesBytes(msgs []Message) int {
	n := 0
	for _, m := range msgs {
		n += len(m.Text) + messageOverhead
		for _, c := range m.ToolCalls {
			n += len(c.ID) + len(c.Name) + len(c.Input) + callOverhead
		}
		for _, r := range m.ToolResults {
			n += len(r.CallID) + len(r.Content) + callOverhead
		}
		for _, a := range m.Attachments {
			n += attachmentBytes(a)
		}
	}
	return n
}

// imageBytes stands for one image in the byte count: providers scale
// images down and bill about 1,600 tokens for the largest (Anthropic's
// documented (width x height) / 750, capped by its resizing), whatever the
// file's size.
const imageBytes = 1600 * 3

// attachmentBytes is a file's share of the estimate: its text, a fixed
// size per image, and for other binary content (PDFs) its bytes, which
// errs high as the estimate should.
func attachmentBytes(a Attachment) int {
	n := len(a.Name) + len(a.Text) + messageOverhead
	switch {
	case len(a.Data) == 0:
	case strings.HasPrefix(a.MediaType, "image/"):
		n += imageBytes
	default:
		n += len(a.Data)
	}
	return n
}

// Bounds of the correction factor: a provider's count is trusted to move
// the estimate only so far, so one odd report cannot disable the budget.
const (
	minFactor = 0.5
	maxFactor = 4.0
	// factorMargin keeps the corrected estimate above what was reported.
	factorMargin = 1.1
	// contextErrorGrowth raises the factor when a provider refuses a
	// request the estimate said would fit.
	contextErrorGrowth = 1.25
)

// sizer holds the correction factor per agent.
type sizer struct {
	mu     sync.Mutex
	factor map[string]float64
}

func (s *sizer) get(agent string) float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if f, ok := s.factor[agent]; ok {
		return f
	}
	return 1
}

func (s *sizer) set(agent string, f float64) {
	f = min(max(f, minFactor), maxFactor)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.factor == nil {
		s.factor = map[string]float64{}
	}
	s.factor[agent] = f
}

// estimate is the corrected size of req for agent, in tokens.
func (s *sizer) estimate(agent string, req ModelRequest) int {
	return int(float64(rawEstimate(req))*s.get(agent)) + 1
}

// calibrate corrects the agent's factor from a request's raw estimate and
// the input tokens the provider reported for it.
func (s *sizer) calibrate(agent string, raw int, reported int64) {
	if raw <= 0 || reported <= 0 {
		return
	}
	s.set(agent, float64(reported)/float64(raw)*factorMargin)
}

// grow raises the agent's factor after a provider refused a request as too
// long although the estimate said it would fit.
func (s *sizer) grow(agent string) {
	s.set(agent, s.get(agent)*contextErrorGrowth)
}
