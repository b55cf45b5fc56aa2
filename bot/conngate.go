package bot

import (
	"context"
	"net"
	"net/http"
	"sync"
	"time"
)

// A flood of connections that never finish a request (they send a byte
// now and then, or nothing) must not keep Slack's and Linear's webhooks,
// or /healthz, out. The gate (limits.max_connections,
// limits.max_pending_per_client) does three things:
//
//   - a connection that has not yet sent its first request's headers is
//     pending; one client address holds at most max_pending_per_client of
//     them, and a new one past that closes that address's oldest;
//   - a pending connection must send its headers at minHeaderRate bytes
//     a second after a grace of headerGrace, or it is cut;
//   - at max_connections, a new connection closes the oldest connection
//     that is pending or idle between requests, so only connections busy
//     with a request make the next one wait.
//
// A webhook's signed request sends its headers at once, so it is served
// while thousands of trickling connections come and go.
//
// Webhooks (the platforms' routes) and the health routes also keep
// reserved capacity: the gate admits webhookReserve connections beyond
// max_connections, and at most max_connections requests of other routes
// run at once (one more is answered 503 overloaded at once). So even
// when every connection is busy with a slow request to the API or the
// console, a signed Slack event finds a connection and a handler.
const (
	headerGrace    = 2 * time.Second
	minHeaderRate  = 512 // bytes a second
	webhookReserve = 128
)

// limitListener is the gate around ln (see above).
func limitListener(ln net.Listener, maxConns, perClient int) net.Listener {
	return &gate{Listener: ln, slots: make(chan struct{}, maxConns+webhookReserve), closed: make(chan struct{}),
		perClient: perClient, conns: map[*gateConn]struct{}{}, maxGeneral: maxConns}
}

type gate struct {
	net.Listener
	slots     chan struct{}
	closed    chan struct{}
	closeOnce sync.Once
	perClient int

	mu    sync.Mutex
	seq   uint64
	conns map[*gateConn]struct{}
	// general counts requests running to routes other than webhooks;
	// maxGeneral bounds it, leaving the reserve to webhooks.
	general, maxGeneral int
}

// enterGeneral admits a request to a route without reserved capacity;
// false when maxGeneral of them run already.
func (g *gate) enterGeneral() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.general >= g.maxGeneral {
		return false
	}
	g.general++
	return true
}

func (g *gate) leaveGeneral() {
	g.mu.Lock()
	g.general--
	g.mu.Unlock()
}

func (g *gate) Accept() (net.Conn, error) {
	c, err := g.Listener.Accept()
	if err != nil {
		return nil, err
	}
	select {
	case g.slots <- struct{}{}:
	default:
		// Full, and someone is here: make room by closing the oldest
		// connection not busy with a request; while all are busy, the new
		// one waits (in the kernel's backlog, those after it), looking
		// again now and then, as a busy one may turn idle.
		if err := g.makeRoom(); err != nil {
			c.Close()
			return nil, err
		}
	}
	gc := &gateConn{Conn: c, gate: g, addr: clientAddr(c), start: time.Now(), pending: true}
	g.mu.Lock()
	g.seq++
	gc.seq = g.seq
	n := 0
	for o := range g.conns {
		if o.pending && o.addr == gc.addr {
			n++
		}
	}
	g.conns[gc] = struct{}{}
	g.mu.Unlock()
	if n >= g.perClient {
		g.evict(func(o *gateConn) bool { return o.pending && o.addr == gc.addr && o != gc })
	}
	gc.applyReadDeadline()
	return gc, nil
}

// evictEvery is how often a full gate looks again for a connection to
// close while a new one waits.
const evictEvery = 100 * time.Millisecond

// makeRoom takes a slot, closing connections not busy with a request
// until one frees.
func (g *gate) makeRoom() error {
	tick := time.NewTicker(evictEvery)
	defer tick.Stop()
	for {
		g.evict(func(c *gateConn) bool { return c.pending || c.idle })
		select {
		case g.slots <- struct{}{}:
			return nil
		case <-g.closed:
			return net.ErrClosed
		case <-tick.C:
		}
	}
}

// evict closes the oldest connection that match picks; false when none.
func (g *gate) evict(match func(*gateConn) bool) bool {
	g.mu.Lock()
	var oldest *gateConn
	for c := range g.conns {
		if !c.closed && match(c) && (oldest == nil || c.seq < oldest.seq) {
			oldest = c
		}
	}
	if oldest != nil {
		oldest.closed = true // not picked again while it closes
	}
	g.mu.Unlock()
	if oldest == nil {
		return false
	}
	_ = oldest.Conn.Close() // the server sees the error and closes it, which frees the slot
	return true
}

// Close also ends an Accept waiting for a slot.
func (g *gate) Close() error {
	err := g.Listener.Close()
	g.closeOnce.Do(func() { close(g.closed) })
	return err
}

func clientAddr(c net.Conn) string {
	if a, ok := c.RemoteAddr().(*net.TCPAddr); ok {
		return a.IP.String()
	}
	host, _, _ := net.SplitHostPort(c.RemoteAddr().String())
	return host
}

// gateConn is a connection through the gate: it tracks whether it has
// sent a request yet, enforces the header rate until then, and gives its
// slot back on the first Close.
type gateConn struct {
	net.Conn
	gate  *gate
	addr  string
	start time.Time
	seq   uint64
	once  sync.Once

	// Guarded by gate.mu.
	pending, idle, closed bool
	got                   int64
	serverDeadline        time.Time
}

// applyReadDeadline sets the earlier of the server's read deadline and,
// while pending, the time by which the headers read so far fall behind
// minHeaderRate.
func (c *gateConn) applyReadDeadline() {
	c.gate.mu.Lock()
	d := c.serverDeadline
	if c.pending {
		rate := c.start.Add(headerGrace + time.Duration(c.got)*time.Second/minHeaderRate)
		if d.IsZero() || rate.Before(d) {
			d = rate
		}
	}
	c.gate.mu.Unlock()
	_ = c.Conn.SetReadDeadline(d)
}

func (c *gateConn) Read(p []byte) (int, error) {
	c.applyReadDeadline()
	n, err := c.Conn.Read(p)
	c.gate.mu.Lock()
	c.got += int64(n)
	c.gate.mu.Unlock()
	return n, err
}

func (c *gateConn) SetReadDeadline(t time.Time) error {
	c.gate.mu.Lock()
	c.serverDeadline = t
	c.gate.mu.Unlock()
	c.applyReadDeadline()
	return nil
}

func (c *gateConn) SetDeadline(t time.Time) error {
	_ = c.Conn.SetWriteDeadline(t)
	return c.SetReadDeadline(t)
}

// served marks the connection's first request as read: it is no longer
// pending, and the header rate no longer applies.
func (c *gateConn) served() {
	c.gate.mu.Lock()
	was := c.pending
	c.pending = false
	c.gate.mu.Unlock()
	if was {
		c.applyReadDeadline()
	}
}

// setIdle records whether the connection waits between requests.
func (c *gateConn) setIdle(idle bool) {
	c.gate.mu.Lock()
	c.idle = idle
	c.gate.mu.Unlock()
}

func (c *gateConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() {
		c.gate.mu.Lock()
		delete(c.gate.conns, c)
		c.gate.mu.Unlock()
		<-c.gate.slots
	})
	return err
}

// connKey carries a request's gateConn in its context.
type connKey struct{}

// gated wires a server to the gate: the connection rides in each
// request's context, the handler marks it served, and the server's state
// changes mark it idle or busy. reserved tells the routes that keep
// reserved capacity (webhooks, health); nil: none.
func gated(s *http.Server, reserved func(*http.Request) bool) {
	next := s.Handler
	s.ConnContext = func(ctx context.Context, c net.Conn) context.Context {
		return context.WithValue(ctx, connKey{}, c)
	}
	s.ConnState = func(c net.Conn, st http.ConnState) {
		if gc, ok := c.(*gateConn); ok {
			gc.setIdle(st == http.StateIdle)
		}
	}
	s.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if gc, ok := r.Context().Value(connKey{}).(*gateConn); ok {
			gc.served()
			if reserved == nil || !reserved(r) {
				if !gc.gate.enterGeneral() {
					w.Header().Set("Retry-After", "1")
					w.Header().Set("Content-Type", "application/json")
					w.Header().Set("Connection", "close")
					w.WriteHeader(http.StatusServiceUnavailable)
					_, _ = w.Write([]byte(`{"error":{"code":"overloaded","message":"too many requests in progress; retry shortly"}}` + "\n"))
					return
				}
				defer gc.gate.leaveGeneral()
			}
		}
		next.ServeHTTP(w, r)
	})
}

// reservedRoutes matches the requests that keep reserved capacity: the
// platforms' routes (their webhooks) and the health routes.
func reservedRoutes(platforms []Platform) func(*http.Request) bool {
	mux := http.NewServeMux()
	mark := http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})
	for _, p := range platforms {
		for _, r := range p.Routes() {
			mux.Handle(r.Pattern, mark)
		}
	}
	for _, pattern := range []string{"GET /healthz", "GET /livez", "GET /readyz"} {
		mux.Handle(pattern, mark)
	}
	return func(r *http.Request) bool {
		_, pattern := mux.Handler(r)
		return pattern != ""
	}
}
