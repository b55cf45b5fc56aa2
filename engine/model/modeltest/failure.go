package modeltest

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"brain/engine"
	"brain/engine/model/fakemodel"
)

// failures: each failure becomes the ProviderError the engine acts on, after
// as many requests as the retry policy allows.
func (s Suite) failures(t *testing.T) {
	for _, tt := range append(SharedErrors(), s.Errors...) {
		t.Run(tt.Name, func(t *testing.T) {
			srv := NewServer(t)
			srv.Push(tt.Steps...)
			srv.SetDefault(fakemodel.Text("should not be reached"))
			m := s.model(t, srv, func(c *Config) { c.MaxRetries = tt.Retries })
			_, err := m.Generate(t.Context(), UserText("hi"))
			pe := ProviderError(t, err, tt.Code, tt.Transient)
			if pe.Status != tt.Status {
				t.Fatalf("status %d, want %d", pe.Status, tt.Status)
			}
			if got := srv.Received(); got != tt.Requests {
				t.Fatalf("server got %d requests, want %d", got, tt.Requests)
			}
		})
	}
}

// retryThenSuccess: a transient failure within the retry policy is not
// seen by the caller.
func (s Suite) retryThenSuccess(t *testing.T) {
	srv := NewServer(t)
	srv.Push(fakemodel.Fail(503, "busy"), fakemodel.Text("ok"))
	m := s.model(t, srv, func(c *Config) { c.MaxRetries = 1 })
	resp, err := m.Generate(t.Context(), UserText("hi"))
	if err != nil || resp.Text != "ok" {
		t.Fatalf("got %+v, %v", resp, err)
	}
}

// connectionRefused: no server is a transient failure without a status.
func (s Suite) connectionRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	m, err := s.New(Config{BaseURL: "http://" + addr + s.BasePath, APIKey: TestKey, Model: testModel})
	if err != nil {
		t.Fatal(err)
	}
	_, err = m.Generate(t.Context(), UserText("hi"))
	pe := ProviderError(t, err, engine.ProviderUnreachable, true)
	if pe.Status != 0 {
		t.Fatalf("status %d, want 0", pe.Status)
	}
}

// cancelled: the caller cancelling is reported as its context error, not
// as a provider failure.
func (s Suite) cancelled(t *testing.T) {
	srv := NewServer(t)
	srv.Push(fakemodel.Hold())
	m := s.model(t, srv, nil)
	ctx, cancel := context.WithCancel(t.Context())
	errc := make(chan error, 1)
	go func() {
		_, err := m.Generate(ctx, UserText("hi"))
		errc <- err
	}()
	if _, err := srv.WaitRequests(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	cancel()
	err := <-errc
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
	var pe *engine.ProviderError
	if errors.As(err, &pe) {
		t.Fatalf("cancellation reported as provider error %v", pe)
	}
}

// callerDeadline: the caller's deadline passing is its context error.
func (s Suite) callerDeadline(t *testing.T) {
	srv := NewServer(t)
	srv.Push(fakemodel.Hold())
	m := s.model(t, srv, nil)
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	_, err := m.Generate(ctx, UserText("hi"))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v, want context.DeadlineExceeded", err)
	}
}

// attemptTimeout: Config.Timeout expiring is the provider being slow, not
// the caller giving up: a transient provider error.
func (s Suite) attemptTimeout(t *testing.T) {
	srv := NewServer(t)
	srv.Push(fakemodel.Hold())
	m := s.model(t, srv, func(c *Config) { c.Timeout = 50 * time.Millisecond })
	_, err := m.Generate(t.Context(), UserText("hi"))
	ProviderError(t, err, engine.ProviderUnreachable, true)
	if errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("attempt timeout looks like the caller's deadline: %v", err)
	}
}
