package bot

import "brain/internal/startstop"

// Services lists the app's long-lived services in the order Start starts
// them (Shutdown stops them in reverse). Each embeds startstop.Lifecycle;
// tests stress them with startstoptest.Stress.
func (a *App) Services() []startstop.Service {
	out := make([]startstop.Service, len(a.services))
	for i, s := range a.services {
		out[i] = s
	}
	return out
}
