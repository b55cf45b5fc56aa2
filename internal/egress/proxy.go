package egress

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Proxy serves one session's sandbox. Start it with Serve on the listener
// bound into the sandbox; Close ends it and every tunnel.
type Proxy struct {
	policy    Policy
	sessionID string
	agent     string
	now       func() time.Time
	upstream  *http.Transport // plain HTTP and the git path, dialled through policy

	srv *http.Server

	mu       sync.Mutex
	allowed  int
	refused  int
	reasons  map[string]bool // refusals seen, by reason (which names the host)
	fresh    []Refusal       // first refusals not yet reported
	grants   map[string]grant
	tunnels  map[net.Conn]struct{}
	closed   bool
	tunnelWG sync.WaitGroup
}

// Refusal is a host the proxy refused and why.
type Refusal struct {
	Host   string `json:"host"`
	Reason string `json:"reason"`
}

// Report is the session's counts so far and the hosts refused for the
// first time since the last report.
type Report struct {
	Allowed     int       `json:"allowed"`
	Refused     int       `json:"refused"`
	NewRefusals []Refusal `json:"new_refusals,omitempty"`
}

// New returns the proxy of one session; p must pass Check.
func New(p Policy, sessionID, agent string, now func() time.Time) *Proxy {
	if now == nil {
		now = time.Now
	}
	x := &Proxy{
		policy: p, sessionID: sessionID, agent: agent, now: now,
		reasons: map[string]bool{}, grants: map[string]grant{}, tunnels: map[net.Conn]struct{}{},
	}
	x.upstream = &http.Transport{
		DialContext: func(ctx context.Context, _, address string) (net.Conn, error) {
			host, ps, err := net.SplitHostPort(address)
			if err != nil {
				return nil, err
			}
			port, _ := strconv.Atoi(ps)
			return p.dial(ctx, host, port)
		},
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          8,
		IdleConnTimeout:       30 * time.Second,
		TLSHandshakeTimeout:   15 * time.Second,
		ResponseHeaderTimeout: 2 * time.Minute,
	}
	x.srv = &http.Server{Handler: x, ReadHeaderTimeout: 30 * time.Second}
	return x
}

// Serve answers on l until Close.
func (x *Proxy) Serve(l net.Listener) error {
	err := x.srv.Serve(l)
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// Close stops serving and cuts every open tunnel. Safe to call twice.
func (x *Proxy) Close() error {
	x.mu.Lock()
	x.closed = true
	for c := range x.tunnels {
		c.Close()
	}
	x.mu.Unlock()
	err := x.srv.Close()
	x.tunnelWG.Wait()
	x.upstream.CloseIdleConnections()
	return err
}

// Report returns the counts and the refusals not reported before.
func (x *Proxy) Report() Report {
	x.mu.Lock()
	defer x.mu.Unlock()
	r := Report{Allowed: x.allowed, Refused: x.refused, NewRefusals: x.fresh}
	x.fresh = nil
	return r
}

func (x *Proxy) count(host string, err error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if err == nil {
		x.allowed++
		return
	}
	x.refused++
	// The first refusal of each host for each reason is news to the model;
	// repeats are only counted.
	why := err.Error()
	if !x.reasons[why] && len(x.reasons) < 256 {
		x.reasons[why] = true
		x.fresh = append(x.fresh, Refusal{Host: strings.ToLower(host), Reason: why})
	}
}

// deny answers a refused request; the text reaches the sandboxed program
// (git and curl print it), so it says what to do.
func (x *Proxy) deny(w http.ResponseWriter, host string, err error) {
	x.count(host, err)
	http.Error(w, "brain egress proxy: refused: "+err.Error(), http.StatusForbidden)
}

func (x *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodConnect:
		x.connect(w, r)
	case r.URL.IsAbs():
		x.forward(w, r)
	case r.URL.Path == CredentialPath:
		x.credential(w, r)
	default:
		http.Error(w, "brain egress proxy: send requests through the proxy (http_proxy), not to it", http.StatusBadRequest)
	}
}

// hostPort splits an authority, defaulting the port.
func hostPort(authority string, def int) (string, int, error) {
	host, ps, err := net.SplitHostPort(authority)
	if err != nil {
		return authority, def, nil
	}
	port, err := strconv.Atoi(ps)
	if err != nil || port < 1 || port > 65535 {
		return "", 0, fmt.Errorf("invalid port in %q", authority)
	}
	return host, port, nil
}

func (x *Proxy) gitHost(host string, port int) (string, bool) {
	for h, base := range x.policy.GitHosts {
		hh, hp, _ := hostPort(h, 0)
		if strings.EqualFold(hh, host) && (hp == 0 || hp == port) {
			return base, true
		}
	}
	return "", false
}

// connect tunnels TLS (or anything) to an allowed host:port.
func (x *Proxy) connect(w http.ResponseWriter, r *http.Request) {
	host, port, err := hostPort(r.Host, 443)
	if err != nil {
		x.deny(w, r.Host, refuse("%v", err))
		return
	}
	if _, ok := x.gitHost(host, port); ok || x.isGitName(host) {
		x.deny(w, host, refuse("%s is a git host: git reaches it through brain's git path (its https:// URLs work as they are); other tunnels to it are not allowed", host))
		return
	}
	if !x.policy.allowed(host, port) {
		x.deny(w, host, refuse("%s:%d is not on this agent's egress allow-list", host, port))
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 30*time.Second)
	up, err := x.policy.dial(ctx, host, port)
	cancel()
	if err != nil {
		var rf *refusal
		if errors.As(err, &rf) {
			x.deny(w, host, err)
			return
		}
		x.count(host, nil)
		http.Error(w, "brain egress proxy: "+err.Error(), http.StatusBadGateway)
		return
	}
	rc := http.NewResponseController(w)
	down, buf, err := rc.Hijack()
	if err != nil {
		up.Close()
		http.Error(w, "brain egress proxy: cannot tunnel", http.StatusInternalServerError)
		return
	}
	x.count(host, nil)
	if !x.track(up, down) {
		return
	}
	_, _ = down.Write([]byte("HTTP/1.1 200 Connection established\r\n\r\n"))
	go x.splice(up, down, buf)
}

// isGitName reports whether host is the host name of a git host's base
// URL: CONNECT to it would bypass the git path.
func (x *Proxy) isGitName(host string) bool {
	for _, base := range x.policy.GitHosts {
		u := strings.TrimPrefix(strings.TrimPrefix(base, "https://"), "http://")
		u, _, _ = strings.Cut(u, "/")
		h, _, _ := hostPort(u, 0)
		if strings.EqualFold(h, host) {
			return true
		}
	}
	return false
}

func (x *Proxy) track(cs ...net.Conn) bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed {
		for _, c := range cs {
			c.Close()
		}
		return false
	}
	for _, c := range cs {
		x.tunnels[c] = struct{}{}
	}
	x.tunnelWG.Add(1)
	return true
}

func (x *Proxy) splice(up, down net.Conn, buf io.Reader) {
	defer x.tunnelWG.Done()
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(up, buf); closeWrite(up); done <- struct{}{} }()
	go func() { _, _ = io.Copy(down, up); closeWrite(down); done <- struct{}{} }()
	<-done
	<-done
	up.Close()
	down.Close()
	x.mu.Lock()
	delete(x.tunnels, up)
	delete(x.tunnels, down)
	x.mu.Unlock()
}

func closeWrite(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
		return
	}
	c.Close()
}

// hopHeaders are not forwarded (RFC 9110 7.6.1), nor is the proxy's own
// authorization.
var hopHeaders = []string{"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate",
	"Proxy-Authorization", "Te", "Trailer", "Transfer-Encoding", "Upgrade"}

// forward relays a plain-HTTP request: the git path for git hosts, else
// an allowed host over plain HTTP.
func (x *Proxy) forward(w http.ResponseWriter, r *http.Request) {
	if r.URL.Scheme != "http" {
		x.deny(w, r.URL.Host, refuse("only http:// URLs are sent in the clear through the proxy; https goes through CONNECT"))
		return
	}
	host, port, err := hostPort(r.URL.Host, 80)
	if err != nil {
		x.deny(w, r.URL.Host, refuse("%v", err))
		return
	}
	out := r.Clone(r.Context())
	out.RequestURI = ""
	for _, h := range hopHeaders {
		out.Header.Del(h)
	}
	if base, ok := x.gitHost(host, port); ok {
		call, err := x.gitRequest(out, host, base)
		if err != nil {
			x.deny(w, host, err)
			return
		}
		if x.fromMirror(w, out, host, base, call) {
			return
		}
	} else if !x.policy.allowed(host, port) {
		x.deny(w, host, refuse("%s:%d is not on this agent's egress allow-list", host, port))
		return
	}
	resp, err := x.upstream.RoundTrip(out)
	if err != nil {
		var rf *refusal
		if errors.As(err, &rf) {
			x.deny(w, host, rf)
			return
		}
		x.count(host, nil)
		http.Error(w, "brain egress proxy: "+err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	x.count(host, nil)
	for _, h := range hopHeaders {
		resp.Header.Del(h)
	}
	for k, vs := range resp.Header {
		w.Header()[k] = vs
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = io.Copy(w, resp.Body)
}
