// Package startstoptest checks a startstop.Service: Stress calls Start and
// Stop from many goroutines at once (run it under -race). Only tests
// import it.
package startstoptest

import (
	"context"
	"sync"
	"testing"
	"time"

	"brain/internal/startstop"
)

// Stress calls svc's Start and Stop from 20 goroutines at once, each 10
// times, then Stop once more. Every call must return without error: Start
// after Stop does nothing, Stop before Start and twice is fine. It gives
// the whole run 30 seconds, a bound for a hung service, not a timing.
func Stress(t testing.TB, svc startstop.Service) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	errs := make(chan error, 20*10)
	for g := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range 10 {
				if (g+r)%2 == 0 {
					errs <- svc.Start(ctx)
				} else {
					errs <- svc.Stop(ctx)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("start/stop %T: %v", svc, err)
		}
	}
	if err := svc.Stop(ctx); err != nil {
		t.Errorf("final stop of %T: %v", svc, err)
	}
}
