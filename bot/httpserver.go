package bot

import (
	"log/slog"
	"net/http"
	"time"

	"brain/bot/config"
)

// readHeaderTimeout bounds reading a request's headers, within
// limits.read_timeout.
const readHeaderTimeout = 10 * time.Second

// newHTTPServer is the server of the API and the webhooks, with the limits
// block's timeouts, so a client that trickles its body, stops reading its
// answer or idles on a keep-alive connection is cut off instead of holding
// the connection forever. Event streams outlive the write timeout by
// moving their own deadline (bot/api).
//
// reserved picks the requests that keep reserved capacity (conngate.go).
func newHTTPServer(l config.LimitsConfig, h http.Handler, reserved func(*http.Request) bool, log *slog.Logger) *http.Server {
	s := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: min(readHeaderTimeout, l.ReadTimeout.Std()),
		ReadTimeout:       l.ReadTimeout.Std(),
		WriteTimeout:      l.WriteTimeout.Std(),
		IdleTimeout:       l.IdleTimeout.Std(),
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	gated(s, reserved) // served through limitListener (conngate.go)
	return s
}
