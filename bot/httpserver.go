package bot

import (
	"log/slog"
	"net"
	"net/http"
	"sync"
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
func newHTTPServer(l config.LimitsConfig, h http.Handler, log *slog.Logger) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: min(readHeaderTimeout, l.ReadTimeout.Std()),
		ReadTimeout:       l.ReadTimeout.Std(),
		WriteTimeout:      l.WriteTimeout.Std(),
		IdleTimeout:       l.IdleTimeout.Std(),
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
}

// limitListener accepts at most n connections at once
// (limits.max_connections). Past that, Accept waits for one to close and
// new connections wait in the kernel's backlog, so a flood of clients
// queues instead of exhausting file descriptors. It is
// golang.org/x/net/netutil.LimitListener, in small.
func limitListener(ln net.Listener, n int) net.Listener {
	return &limitedListener{Listener: ln, slots: make(chan struct{}, n), closed: make(chan struct{})}
}

type limitedListener struct {
	net.Listener
	slots     chan struct{}
	closed    chan struct{}
	closeOnce sync.Once
}

func (l *limitedListener) Accept() (net.Conn, error) {
	select {
	case l.slots <- struct{}{}:
	case <-l.closed:
		return nil, net.ErrClosed
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.slots
		return nil, err
	}
	return &limitedConn{Conn: c, release: func() { <-l.slots }}, nil
}

// Close also ends an Accept waiting for a slot.
func (l *limitedListener) Close() error {
	err := l.Listener.Close()
	l.closeOnce.Do(func() { close(l.closed) })
	return err
}

// limitedConn gives its slot back on the first Close.
type limitedConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}
