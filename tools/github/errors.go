package github

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	gh "github.com/google/go-github/v62/github"

	"brain/tools"
)

// maxMessage is the most of GitHub's own error text a message quotes.
const maxMessage = 300

// fail turns a failed GitHub call into the error the model sees, following
// the rule every tool keeps: refused before sending (or refused by GitHub)
// is a plain error; after sending with no answer, or a 5xx, the outcome is
// unknown. Rate limits say when to retry; nothing here retries.
func (c *client) fail(ctx context.Context, op string, resp *gh.Response, err error, sent bool) error {
	var te *tools.Error
	if errors.As(err, &te) {
		return te
	}
	var me *mintError
	if errors.As(err, &me) {
		return tools.Failed("%s: %s; nothing was sent", op, me.msg)
	}
	var rl *gh.RateLimitError
	if errors.As(err, &rl) {
		return tools.Failed("%s: GitHub's API rate limit for this credential is used up until %s; retry after then. "+
			"GitHub did not do it, and it is not retried automatically", op, c.when(rl.Rate.Reset.Time))
	}
	var ab *gh.AbuseRateLimitError
	if errors.As(err, &ab) {
		return c.secondaryLimit(op, ab.RetryAfter)
	}
	var er *gh.ErrorResponse
	if errors.As(err, &er) && er.Response != nil {
		return c.statusError(op, er)
	}
	var ae *gh.AcceptedError
	if errors.As(err, &ae) {
		return tools.Unknown("%s: GitHub accepted the request for later processing (HTTP 202); look again in a moment", op)
	}
	if resp != nil && resp.Response != nil && resp.StatusCode >= 200 && resp.StatusCode <= 299 {
		return tools.Unknown("%s: GitHub answered HTTP %d but the answer could not be read (%s); the request was sent and may have had its effect",
			op, resp.StatusCode, c.reason(ctx, err))
	}
	if !sent {
		return tools.Failed("%s: %s; nothing was sent", op, c.reason(ctx, err))
	}
	return tools.Unknown("%s: %s after the request was sent; it may have reached GitHub and had its effect", op, c.reason(ctx, err))
}

// secondaryLimit is GitHub's secondary (abuse) rate limit: the request was
// refused; GitHub asks to wait Retry-After, or at least a minute.
func (c *client) secondaryLimit(op string, after *time.Duration) error {
	wait := "wait at least a minute before retrying"
	if after != nil {
		wait = fmt.Sprintf("retry after %s, at %s", after.Round(time.Second), c.now().Add(*after).UTC().Format(time.RFC3339))
	}
	return tools.Failed("%s: GitHub's secondary rate limit refused the request; %s. GitHub did not do it, and it is not retried automatically", op, wait)
}

func (c *client) statusError(op string, er *gh.ErrorResponse) error {
	r := er.Response
	code := r.StatusCode
	if code == http.StatusTooManyRequests || (code == http.StatusForbidden && r.Header.Get("Retry-After") != "") {
		return c.secondaryLimit(op, retryAfter(r.Header))
	}
	detail := c.detail(er)
	switch {
	case code >= 500 || code == http.StatusRequestTimeout:
		return tools.Unknown("%s: GitHub answered HTTP %d %s%s; the request may have had its effect", op, code, http.StatusText(code), detail)
	case code == http.StatusNotFound:
		return tools.Failed("%s: not found (HTTP 404): it does not exist, or the credential cannot see it", op)
	case code == http.StatusUnauthorized:
		return tools.Failed("%s: GitHub refused the credential (HTTP 401)%s", op, detail)
	case code == http.StatusForbidden:
		return tools.Failed("%s: forbidden (HTTP 403)%s; the credential may lack the permission this tool needs", op, detail)
	case code == http.StatusUnprocessableEntity:
		return tools.Failed("%s: GitHub refused the request as invalid (HTTP 422)%s", op, detail)
	}
	return tools.Failed("%s: GitHub answered HTTP %d %s%s", op, code, http.StatusText(code), detail)
}

// detail is GitHub's message and field errors, scrubbed and short.
func (c *client) detail(er *gh.ErrorResponse) string {
	parts := []string{}
	if m := strings.TrimSpace(er.Message); m != "" {
		parts = append(parts, m)
	}
	for _, e := range er.Errors {
		switch {
		case e.Message != "":
			parts = append(parts, e.Message)
		case e.Field != "":
			parts = append(parts, fmt.Sprintf("%s %s", e.Field, e.Code))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	text := c.secrets.scrubber().String(strings.Join(parts, "; "))
	return ": " + clip(strings.Join(strings.Fields(text), " "), maxMessage)
}

// retryAfter reads a Retry-After header in seconds.
func retryAfter(h http.Header) *time.Duration {
	n, err := strconv.Atoi(strings.TrimSpace(h.Get("Retry-After")))
	if err != nil || n < 0 {
		return nil
	}
	d := time.Duration(n) * time.Second
	return &d
}

// when is an instant as a message shows it: absolute and relative.
func (c *client) when(t time.Time) string {
	d := max(t.Sub(c.now()).Round(time.Second), 0)
	return fmt.Sprintf("%s (in %s)", t.UTC().Format(time.RFC3339), d)
}

// reason says why a request failed, scrubbed.
func (c *client) reason(ctx context.Context, err error) string {
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded) || errors.Is(err, context.DeadlineExceeded):
		return "timed out"
	case ctx.Err() != nil || errors.Is(err, context.Canceled):
		return "cancelled"
	}
	return c.secrets.scrubber().String(err.Error())
}
