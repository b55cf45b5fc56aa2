package linear

import (
	"errors"
	"net/http"
	"strconv"
	"testing"
	"time"
)

func TestOutcome(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	hdr := func(kv ...string) http.Header {
		h := http.Header{}
		for i := 0; i < len(kv); i += 2 {
			h.Set(kv[i], kv[i+1])
		}
		return h
	}
	tests := []struct {
		name      string
		status    int
		header    http.Header
		body      string
		wantErr   bool
		wantCode  string
		wantMsg   string
		limited   bool
		wantWait  time.Duration
		temporary bool
	}{
		{name: "success", status: 200, body: `{"data":{"agentActivityCreate":{"success":true,"agentActivity":{"id":"a"}}}}`},
		{name: "success false", status: 200, body: `{"data":{"agentActivityCreate":{"success":false}}}`, wantErr: true, wantMsg: "the mutation did not report success"},
		{name: "no data", status: 200, body: `{"data":null}`, wantErr: true},
		{name: "graphql error in 200", status: 200, body: `{"data":null,"errors":[{"message":"Entity not found","extensions":{"code":"INVALID_INPUT","userPresentableMessage":"Agent session not found"}},{"message":"x"}]}`,
			wantErr: true, wantCode: "INVALID_INPUT", wantMsg: "Agent session not found (and 1 more)"},
		{name: "partial data with errors", status: 200, body: `{"data":{"agentActivityCreate":{"success":true}},"errors":[{"message":"late failure"}]}`,
			wantErr: true, wantMsg: "late failure"},
		{name: "rate limited in 200", status: 200, header: hdr("Retry-After", "7"), body: `{"errors":[{"message":"Rate limit exceeded","extensions":{"code":"RATELIMITED"}}]}`,
			wantErr: true, wantCode: "RATELIMITED", limited: true, wantWait: 7 * time.Second, temporary: true},
		{name: "rate limited in 400, SDK-style type", status: 400, header: hdr("X-RateLimit-Requests-Reset", strconv.FormatInt(now.Add(90*time.Second).UnixMilli(), 10)),
			body: `{"errors":[{"message":"too many","extensions":{"type":"ratelimited"}}]}`, wantErr: true, wantCode: "RATELIMITED", limited: true, wantWait: 90 * time.Second},
		{name: "bare 429", status: 429, header: hdr("X-RateLimit-Complexity-Reset", strconv.FormatInt(now.Add(5*time.Second).Unix(), 10)), body: `slow down`,
			wantErr: true, wantCode: "RATELIMITED", limited: true, wantWait: 5 * time.Second},
		{name: "internal error", status: 200, body: `{"errors":[{"message":"boom","extensions":{"code":"INTERNAL_ERROR"}}]}`, wantErr: true, wantCode: "INTERNAL_ERROR", temporary: true},
		{name: "auth error", status: 400, body: `{"errors":[{"message":"Authentication required","extensions":{"code":"AUTHENTICATION_ERROR"}}]}`, wantErr: true, wantCode: "AUTHENTICATION_ERROR"},
		{name: "proxy 502", status: 502, body: `<html>bad gateway</html>`, wantErr: true, wantMsg: "Bad Gateway", temporary: true},
		{name: "garbage 200", status: 200, body: `<html>`, wantErr: true, wantMsg: "undecodable response"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := tt.header
			if h == nil {
				h = http.Header{}
			}
			err := outcome("agentActivityCreate", &http.Response{StatusCode: tt.status, Header: h}, []byte(tt.body), now)
			if !tt.wantErr {
				if err != nil {
					t.Fatalf("outcome: %v", err)
				}
				return
			}
			ae, ok := errors.AsType[*APIError](err)
			if !ok || ae.Status != tt.status || ae.Code != tt.wantCode || (tt.wantMsg != "" && ae.Message != tt.wantMsg) {
				t.Fatalf("err %#v", err)
			}
			rl, limited := errors.AsType[*RateLimitError](err)
			if limited != tt.limited || (limited && rl.RetryAfter != tt.wantWait) {
				t.Fatalf("rate limit %v %+v", limited, rl)
			}
			c := New("", "", nil, nil)
			if _, retry := c.retryWait(err, 1); retry != tt.temporary && !(limited && tt.wantWait <= c.maxRateWait) {
				t.Fatalf("retry %v, want %v", retry, tt.temporary)
			}
		})
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	tests := []struct {
		name string
		h    http.Header
		want time.Duration
	}{
		{"none", http.Header{}, 0},
		{"seconds", http.Header{"Retry-After": {"3"}}, 3 * time.Second},
		{"fraction", http.Header{"Retry-After": {"0.5"}}, 500 * time.Millisecond},
		{"http date", http.Header{"Retry-After": {now.Add(time.Minute).UTC().Format(http.TimeFormat)}}, time.Minute},
		{"past date", http.Header{"Retry-After": {now.Add(-time.Minute).UTC().Format(http.TimeFormat)}}, 0},
		{"garbage", http.Header{"Retry-After": {"soon"}}, 0},
		{"reset ms", http.Header{"X-Ratelimit-Requests-Reset": {strconv.FormatInt(now.Add(42*time.Second).UnixMilli(), 10)}}, 42 * time.Second},
		{"latest reset wins", http.Header{
			"X-Ratelimit-Requests-Reset":   {strconv.FormatInt(now.Add(2*time.Second).UnixMilli(), 10)},
			"X-Ratelimit-Complexity-Reset": {strconv.FormatInt(now.Add(9*time.Second).UnixMilli(), 10)},
		}, 9 * time.Second},
		{"reset in the past", http.Header{"X-Ratelimit-Requests-Reset": {strconv.FormatInt(now.Add(-time.Hour).UnixMilli(), 10)}}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := retryAfter(tt.h, now); got != tt.want {
				t.Fatalf("retryAfter = %s, want %s", got, tt.want)
			}
		})
	}
}
