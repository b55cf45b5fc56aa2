package linear

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"

	"brain/tools"
)

// maxResponse caps the response body read from Linear.
const maxResponse = 1 << 20

// maxBackoff caps the wait between two tries (before jitter).
const maxBackoff = 30 * time.Second

// APIError is a call Linear answered with an error: GraphQL errors (which
// Linear sends with HTTP 200 as well as 4xx), a non-2xx status, or a
// mutation that reported success false.
type APIError struct {
	Op      string // the mutation, e.g. "agentActivityCreate"
	Status  int    // the HTTP status
	Code    string // the first GraphQL error's extensions.code, e.g. "INVALID_INPUT"
	Message string // the first error's message, the user-presentable one when given
}

func (e *APIError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "linear %s", e.Op)
	if e.Code != "" {
		fmt.Fprintf(&b, ": %s", e.Code)
	}
	if e.Message != "" {
		fmt.Fprintf(&b, ": %s", e.Message)
	}
	if e.Status != http.StatusOK {
		fmt.Fprintf(&b, " (HTTP %d)", e.Status)
	}
	return b.String()
}

// temporary reports whether the same call may succeed later.
func (e *APIError) temporary() bool {
	switch {
	case e.Status >= 500, e.Status == http.StatusRequestTimeout:
		return true
	case e.Code == "INTERNAL_ERROR", e.Code == "LOCK_TIMEOUT", e.Code == "NETWORK_ERROR":
		return true
	}
	return false
}

// RateLimitError is a call Linear refused because of a rate limit: a
// GraphQL error with code RATELIMITED, or HTTP 429. errors.As finds the
// APIError inside it too.
type RateLimitError struct {
	APIError
	// RetryAfter is how long Linear asked to wait (Retry-After, or the
	// X-RateLimit-*-Reset headers); 0 when it did not say.
	RetryAfter time.Duration
}

func (e *RateLimitError) Error() string {
	if e.RetryAfter > 0 {
		return fmt.Sprintf("%s; retry after %s", e.APIError.Error(), e.RetryAfter)
	}
	return e.APIError.Error()
}

func (e *RateLimitError) Unwrap() error { return &e.APIError }

// transportError is a call that got no answer (connection refused or
// dropped, a timeout): the mutation may or may not have been applied.
type transportError struct {
	op  string
	err error
}

func (e *transportError) Error() string { return fmt.Sprintf("linear %s: %v", e.op, e.err) }
func (e *transportError) Unwrap() error { return e.err }

// call posts one mutation, retrying transient failures (no answer, 5xx,
// internal errors, rate limits with a short wait) up to c.attempts times
// with exponential backoff, never past ctx. Retries resend the same bytes;
// activities are idempotent on their id, session updates by nature.
func (c *Client) call(ctx context.Context, op, query string, vars map[string]any) error {
	_, err := c.do(ctx, op, query, vars, true)
	return err
}

// query runs a GraphQL query (retried like call) and returns its data.
func (c *Client) query(ctx context.Context, op, query string, vars map[string]any) (map[string]json.RawMessage, error) {
	return c.do(ctx, op, query, vars, false)
}

// do is call and query: a mutation must report success. A token Linear
// refuses as unauthenticated is refreshed, once, and the request re-sent.
func (c *Client) do(ctx context.Context, op, query string, vars map[string]any, mutation bool) (map[string]json.RawMessage, error) {
	body, err := json.Marshal(map[string]any{"query": query, "variables": vars})
	if err != nil {
		return nil, fmt.Errorf("encode linear %s: %w", op, err)
	}
	refreshed := false
	for attempt := 1; ; attempt++ {
		auth, err := c.authorization(ctx)
		if err != nil {
			return nil, fmt.Errorf("linear %s: %w", op, err)
		}
		data, err := c.once(ctx, op, auth, body, mutation)
		if err == nil {
			return data, nil
		}
		if ctx.Err() != nil {
			return nil, err
		}
		if c.tokens != nil && !refreshed && IsAuthError(err) {
			// The token expired or was revoked early: refresh once and
			// send again at once, without counting it as a try.
			refreshed = true
			if _, rerr := c.tokens.Refresh(ctx, strings.TrimPrefix(auth, "Bearer ")); rerr != nil {
				return nil, fmt.Errorf("%w (refresh: %w)", err, rerr)
			}
			attempt--
			continue
		}
		wait, retry := c.retryWait(err, attempt)
		if !retry || attempt >= c.attempts {
			return nil, err
		}
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < wait {
			return nil, err // no time left to wait it out
		}
		c.log.DebugContext(ctx, "linear call retrying", tools.LogOp, op, tools.LogAttempt, attempt, tools.LogRetryAfter, wait, tools.LogErr, err)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("%w (gave up retrying: %w)", err, ctx.Err())
		case <-t.C:
		}
	}
}

// IsAuthError reports whether err is Linear refusing the access token
// (expired, revoked): HTTP 401 or an AUTHENTICATION_ERROR.
func IsAuthError(err error) bool {
	ae, ok := errors.AsType[*APIError](err)
	return ok && (ae.Status == http.StatusUnauthorized || strings.EqualFold(ae.Code, "AUTHENTICATION_ERROR"))
}

// retryWait says whether err is worth another try and how long to wait.
func (c *Client) retryWait(err error, attempt int) (time.Duration, bool) {
	backoff := c.backoff << min(attempt-1, 10)
	if backoff <= 0 || backoff > maxBackoff {
		backoff = maxBackoff
	}
	backoff += time.Duration(rand.Int64N(int64(backoff)/5 + 1)) // up to 20% jitter
	if rl, ok := errors.AsType[*RateLimitError](err); ok {
		if rl.RetryAfter > c.maxRateWait {
			return 0, false // too long to hold the caller: let it decide
		}
		return max(rl.RetryAfter, backoff), true
	}
	if _, ok := errors.AsType[*transportError](err); ok {
		return backoff, true
	}
	if ae, ok := errors.AsType[*APIError](err); ok && ae.temporary() {
		return backoff, true
	}
	return 0, false
}

// once makes one HTTP exchange and reads its outcome.
func (c *Client) once(ctx context.Context, op, auth string, body []byte, mutation bool) (map[string]json.RawMessage, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("linear %s: %w", op, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("linear %s: %w", op, ctx.Err())
		}
		return nil, &transportError{op, err}
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse))
	if err != nil {
		return nil, &transportError{op, fmt.Errorf("read response: %w", err)}
	}
	if !mutation {
		return queryOutcome(op, resp, raw, time.Now())
	}
	return nil, outcome(op, resp, raw, time.Now())
}

// queryOutcome is outcome for a query: errors the same way, no success
// flag to check, the data returned.
func queryOutcome(op string, resp *http.Response, raw []byte, now time.Time) (map[string]json.RawMessage, error) {
	var gr gqlResponse
	decoded := json.Unmarshal(raw, &gr) == nil
	if decoded && len(gr.Errors) == 0 && resp.StatusCode/100 == 2 && gr.Data != nil {
		return gr.Data, nil
	}
	err := outcome(op, resp, raw, now)
	if err == nil {
		err = &APIError{Op: op, Status: resp.StatusCode, Message: "no data"}
	}
	return nil, err
}

// gqlResponse is a GraphQL response body.
type gqlResponse struct {
	Data   map[string]json.RawMessage `json:"data"`
	Errors []struct {
		Message    string `json:"message"`
		Extensions struct {
			Code                   string `json:"code"`
			Type                   string `json:"type"`
			UserPresentableMessage string `json:"userPresentableMessage"`
		} `json:"extensions"`
	} `json:"errors"`
}

// outcome turns a response into nil or an error. GraphQL errors are read
// whatever the status: Linear answers them with 200 (rate limits included)
// as well as with 4xx.
func outcome(op string, resp *http.Response, raw []byte, now time.Time) error {
	var gr gqlResponse
	decoded := json.Unmarshal(raw, &gr) == nil
	ae := APIError{Op: op, Status: resp.StatusCode}
	limited := resp.StatusCode == http.StatusTooManyRequests
	switch {
	case decoded && len(gr.Errors) > 0:
		e := gr.Errors[0]
		ae.Code = e.Extensions.Code
		ae.Message = firstNonEmpty(e.Extensions.UserPresentableMessage, e.Message, e.Extensions.Type)
		if more := len(gr.Errors) - 1; more > 0 {
			ae.Message += fmt.Sprintf(" (and %d more)", more)
		}
		if strings.EqualFold(ae.Code, "RATELIMITED") || strings.EqualFold(e.Extensions.Type, "ratelimited") {
			limited = true
		}
	case resp.StatusCode/100 != 2:
		ae.Message = http.StatusText(resp.StatusCode)
	case !decoded:
		ae.Message = "undecodable response"
	default:
		var payload struct {
			Success bool `json:"success"`
		}
		result := gr.Data[op] // GraphQL's data.<mutation>, not an event's data
		if json.Unmarshal(result, &payload) == nil && payload.Success {
			return nil
		}
		ae.Message = "the mutation did not report success"
	}
	if limited {
		if ae.Code == "" {
			ae.Code = "RATELIMITED"
		}
		return &RateLimitError{APIError: ae, RetryAfter: retryAfter(resp.Header, now)}
	}
	return &ae
}

// retryAfter reads how long Linear asked to wait: Retry-After (seconds or
// an HTTP date), else the latest of the X-RateLimit-*-Reset headers (epoch
// milliseconds; seconds are tolerated). 0 when none says.
func retryAfter(h http.Header, now time.Time) time.Duration {
	if v := strings.TrimSpace(h.Get("Retry-After")); v != "" {
		if s, err := strconv.ParseFloat(v, 64); err == nil && s >= 0 && s < 1e6 {
			return time.Duration(s * float64(time.Second))
		}
		if t, err := http.ParseTime(v); err == nil {
			return max(t.Sub(now), 0)
		}
	}
	var wait time.Duration
	for _, k := range []string{"X-RateLimit-Requests-Reset", "X-RateLimit-Complexity-Reset", "X-RateLimit-Endpoint-Requests-Reset"} {
		n, err := strconv.ParseInt(strings.TrimSpace(h.Get(k)), 10, 64)
		if err != nil || n <= 0 {
			continue
		}
		at := time.UnixMilli(n)
		if n < 1e12 { // seconds, not milliseconds
			at = time.Unix(n, 0)
		}
		wait = max(wait, at.Sub(now))
	}
	return wait
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}
