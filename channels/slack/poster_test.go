package slack

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/slack-go/slack"
)

// queued returns how many jobs wait on channel's queue.
func queued(p *Poster, channel string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if l := p.lanes[channel]; l != nil {
		return len(l.jobs)
	}
	return 0
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestPoster_RateLimitKeepsOrder(t *testing.T) {
	p, fake := newPoster(t)
	ctx := testCtx(t)
	fake.RateLimit("chat.postMessage", 3, time.Second)

	start := time.Now()
	var wg sync.WaitGroup
	errs := make([]error, 5)
	for i := range 5 {
		wg.Go(func() {
			_, errs[i] = p.Reply(ctx, testChannel, testThread, fmt.Sprintf("reply %d", i))
		})
		// Queue them one after the other while the first waits out the 429s.
		if i == 0 {
			waitFor(t, "the first 429", func() bool { return len(fake.Calls("chat.postMessage")) > 0 })
		} else {
			waitFor(t, fmt.Sprintf("reply %d queued", i), func() bool { return queued(p, testChannel) == i })
		}
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("reply %d: %v", i, err)
		}
	}
	if elapsed := time.Since(start); elapsed < 2900*time.Millisecond {
		t.Errorf("took %s; three Retry-After: 1 should take 3s", elapsed)
	}
	msgs := fake.Thread(testChannel, testThread)
	if len(msgs) != 5 {
		t.Fatalf("%d messages, want 5", len(msgs))
	}
	for i, m := range msgs {
		if want := fmt.Sprintf("reply %d", i); m.Text != want {
			t.Errorf("message %d is %q, want %q", i, m.Text, want)
		}
	}
	calls := fake.Calls("chat.postMessage")
	if len(calls) != 8 {
		t.Fatalf("%d calls, want 3 rate limited + 5", len(calls))
	}
	for i, c := range calls {
		want := http.StatusOK
		if i < 3 {
			want = http.StatusTooManyRequests
		}
		if c.Status != want || (i < 3 && c.Params.Get("text") != "reply 0") {
			t.Errorf("call %d: status %d text %q", i, c.Status, c.Params.Get("text"))
		}
	}
}

func TestPoster_RateLimitBoundedByContext(t *testing.T) {
	p, fake := newPoster(t)
	fake.RateLimit("chat.postMessage", 1, time.Minute)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := p.Reply(ctx, testChannel, testThread, "hi")
		done <- err
	}()
	waitFor(t, "the 429", func() bool { return len(fake.Calls("chat.postMessage")) > 0 })
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Reply = %v, want context.Canceled", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Reply still waits out a Retry-After of a minute after its ctx ended")
	}
	// The channel is usable afterwards.
	if _, err := p.Reply(testCtx(t), testChannel, testThread, "again"); err != nil {
		t.Fatal(err)
	}
}

func TestPoster_AbandonedCallIsDropped(t *testing.T) {
	p, fake := newPoster(t)
	fake.RateLimit("chat.postMessage", 1, time.Minute)
	first := make(chan error, 1)
	go func() {
		_, err := p.Reply(testCtx(t), testChannel, "", "first")
		first <- err
	}()
	waitFor(t, "the 429", func() bool { return len(fake.Calls("chat.postMessage")) > 0 })
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := p.Reply(ctx, testChannel, "", "second"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("queued Reply = %v, want DeadlineExceeded", err)
	}
	p.Close()
	if err := <-first; !errors.Is(err, ErrClosed) {
		t.Errorf("first = %v", err)
	}
	for _, c := range fake.Calls("chat.postMessage") {
		if c.Params.Get("text") == "second" {
			t.Error("the abandoned reply was sent")
		}
	}
}

func TestPoster_ChannelsDoNotWaitForEachOther(t *testing.T) {
	p, fake := newPoster(t)
	ctx := testCtx(t)
	fake.RateLimit("chat.postMessage", 1, time.Minute)
	done := make(chan error, 1)
	go func() {
		_, err := p.Reply(ctx, "C_SLOW", "", "slow")
		done <- err
	}()
	waitFor(t, "the 429", func() bool { return len(fake.Calls("chat.postMessage")) > 0 })
	if _, err := p.Reply(ctx, "C_FAST", "", "fast"); err != nil {
		t.Fatal(err)
	}
	p.Close()
	if err := <-done; !errors.Is(err, ErrClosed) {
		t.Errorf("slow reply after Close: %v, want ErrClosed", err)
	}
}

func TestPoster_CloseLeavesNoGoroutines(t *testing.T) {
	p, fake := newPoster(t)
	ctx := testCtx(t)
	for _, ch := range []string{"C1", "C2", "C3"} {
		if _, err := p.Reply(ctx, ch, "", "hello"); err != nil {
			t.Fatal(err)
		}
	}
	// A pending trailing status update (real clock) and a call stuck in a
	// rate-limit wait.
	fake.Fail("assistant.threads.setStatus", -1, "not_allowed")
	for _, text := range []string{"one", "two"} {
		if err := p.SetStatus(ctx, "C1", testThread, text); err != nil {
			t.Fatal(err)
		}
	}
	fake.RateLimit("chat.postMessage", 1, time.Minute)
	posts := len(fake.Calls("chat.postMessage"))
	stuck := make(chan error, 1)
	go func() {
		_, err := p.Reply(ctx, "C2", "", "stuck")
		stuck <- err
	}()
	waitFor(t, "the 429", func() bool { return len(fake.Calls("chat.postMessage")) > posts })
	if posterGoroutines() == 0 {
		t.Fatal("no poster goroutine seen while a call waits: the leak check would prove nothing")
	}

	p.Close()
	p.Close() // twice is fine
	if err := <-stuck; !errors.Is(err, ErrClosed) {
		t.Errorf("stuck reply: %v, want ErrClosed", err)
	}
	if _, err := p.Reply(ctx, "C1", "", "late"); !errors.Is(err, ErrClosed) {
		t.Errorf("Reply after Close: %v, want ErrClosed", err)
	}
	if err := p.SetStatus(ctx, "C1", testThread, "late"); !errors.Is(err, ErrClosed) {
		t.Errorf("SetStatus after Close: %v, want ErrClosed", err)
	}
	waitFor(t, "poster goroutines to end", func() bool { return posterGoroutines() == 0 })
	time.Sleep(1200 * time.Millisecond) // past the status interval: no timer fires
	if n := posterGoroutines(); n != 0 {
		t.Errorf("%d poster goroutines after Close", n)
	}
	if got := fake.Thread("C1", testThread); len(got) != 1 || got[0].Text != "one" {
		t.Errorf("status after Close = %+v", got)
	}
}

func TestRetryAfter(t *testing.T) {
	tests := []struct {
		err     error
		wait    time.Duration
		limited bool
	}{
		{&slack.RateLimitedError{RetryAfter: 2 * time.Second}, 2 * time.Second, true},
		{fmt.Errorf("wrapped: %w", &slack.RateLimitedError{}), 0, true},
		{slack.StatusCodeError{Code: http.StatusTooManyRequests}, time.Second, true},
		{slack.StatusCodeError{Code: http.StatusInternalServerError}, 0, false},
		{slack.SlackErrorResponse{Err: "ratelimited"}, 0, false},
		{nil, 0, false},
	}
	for _, tt := range tests {
		wait, limited := retryAfter(tt.err)
		if wait != tt.wait || limited != tt.limited {
			t.Errorf("retryAfter(%v) = %s, %v", tt.err, wait, limited)
		}
	}
}
