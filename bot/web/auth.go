package web

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"math"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

	"brain/tools"
)

// cookieName carries the console session's token; the session itself
// lives in memory (sessionStore), so a restart or a logout revokes it.
const cookieName = "brain_console"

// Sign-in limits.
const (
	// guestTTL bounds a visitor who has not signed in (it holds the CSRF
	// token of the sign-in form).
	guestTTL = time.Hour
	// maxVisitors bounds the sessions kept in memory; past it, guests are
	// dropped first.
	maxVisitors = 10000
	// maxFormBytes caps a form post.
	maxFormBytes = 64 << 10
)

// visitor is one browser's console session.
type visitor struct {
	token   string
	csrf    string
	expires time.Time
	// signedIn is set by a key or a Slack sign-in; name is shown, by is
	// recorded on decisions and messages, viaKey marks a key holder (it
	// may decide approvals of API and console sessions, as through the
	// API).
	signedIn bool
	name     string
	by       string
	viaKey   bool
	// admin sees and acts on everything: a key holder, or a person in
	// console.admins (access.go).
	admin bool
}

// identity is who acts for a request: the signed-in person, or, on an open
// console (this host, no api_keys), the host itself, as the API does.
func (v *visitor) identity() (by string, viaKey bool) {
	if v.signedIn {
		return v.by, v.viaKey
	}
	return "console", true
}

// sessionStore keeps visitors by token. Safe for concurrent use.
type sessionStore struct {
	now func() time.Time
	ttl time.Duration

	mu       sync.Mutex
	visitors map[string]*visitor
}

func newSessionStore(now func() time.Time, ttl time.Duration) *sessionStore {
	return &sessionStore{now: now, ttl: ttl, visitors: map[string]*visitor{}}
}

func newToken() string {
	var b [32]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// get returns a copy of the visitor with token, if it has not expired.
func (st *sessionStore) get(token string) (visitor, bool) {
	if token == "" {
		return visitor{}, false
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	v, ok := st.visitors[token]
	if !ok {
		return visitor{}, false
	}
	if !st.now().Before(v.expires) {
		delete(st.visitors, token)
		return visitor{}, false
	}
	return *v, true
}

// put stores v under a fresh token (a sign-in never keeps the token it
// started with, so a planted cookie cannot be promoted) and returns it.
func (st *sessionStore) put(v visitor) visitor {
	v.token, v.csrf = newToken(), newToken()
	ttl := guestTTL
	if v.signedIn {
		ttl = st.ttl
	}
	v.expires = st.now().Add(ttl)
	st.mu.Lock()
	defer st.mu.Unlock()
	if len(st.visitors) >= maxVisitors {
		st.pruneLocked()
	}
	st.visitors[v.token] = &v
	return v
}

func (st *sessionStore) drop(token string) {
	st.mu.Lock()
	defer st.mu.Unlock()
	delete(st.visitors, token)
}

// pruneLocked drops the expired visitors, then guests until there is room.
func (st *sessionStore) pruneLocked() {
	now := st.now()
	for t, v := range st.visitors {
		if !now.Before(v.expires) {
			delete(st.visitors, t)
		}
	}
	for t, v := range st.visitors {
		if len(st.visitors) < maxVisitors {
			return
		}
		if !v.signedIn {
			delete(st.visitors, t)
		}
	}
}

// forwardedHeaders are what reverse proxies add to name the client they
// relay; any of them means the loopback peer is not the caller.
var forwardedHeaders = []string{"Forwarded", "X-Forwarded-For", "X-Real-IP"}

// local reports whether r came straight from this host.
func local(r *http.Request) bool {
	peer, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil || !peer.Addr().Unmap().IsLoopback() {
		return false
	}
	for _, h := range forwardedHeaders {
		if len(r.Header.Values(h)) > 0 {
			return false
		}
	}
	return true
}

// open reports whether the console lets r in without a sign-in: no
// api_keys and a caller on this host, as the API does.
func (s *Server) open(r *http.Request) bool { return s.keys.Empty() && local(r) }

// visitorOf returns r's visitor, if its cookie names a live one.
func (s *Server) visitorOf(r *http.Request) (visitor, bool) {
	c, err := r.Cookie(cookieName)
	if err != nil {
		return visitor{}, false
	}
	return s.auth.get(c.Value)
}

func (s *Server) setCookie(w http.ResponseWriter, r *http.Request, v visitor) {
	c := &http.Cookie{
		Name: cookieName, Value: v.token, Path: "/",
		HttpOnly: true, SameSite: http.SameSiteStrictMode,
		Secure: r.TLS != nil || strings.HasPrefix(s.cfg.PublicURL, "https://"),
	}
	if v.signedIn {
		c.Expires = v.expires
	}
	http.SetCookie(w, c)
}

// handler is a console route that knows its visitor.
type handler func(w http.ResponseWriter, r *http.Request, v visitor)

// guest serves GET pages anyone may see (the sign-in page), giving a new
// browser a guest session for the CSRF token of its forms.
func (s *Server) guest(h handler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		v, ok := s.visitorOf(r)
		if !ok {
			v = s.auth.put(visitor{})
			s.setCookie(w, r, v)
		}
		h(w, r, v)
	}
}

// visiting serves a route anyone may reach without giving a new browser
// a session: the Slack sign-in's start and callback, so a flood of starts
// stores nothing.
func (s *Server) visiting(h handler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		v, _ := s.visitorOf(r)
		h(w, r, v)
	}
}

// page serves a GET page that needs a sign-in (or an open console);
// others are sent to the sign-in page and come back after it.
func (s *Server) page(h handler) http.HandlerFunc {
	return s.guest(func(w http.ResponseWriter, r *http.Request, v visitor) {
		if v.signedIn || s.open(r) {
			h(w, r, v)
			return
		}
		if _, err := r.Cookie(cookieName); err != nil && r.Header.Get("Sec-Fetch-Site") == "cross-site" {
			// A link followed from Slack or Linear: the browser withholds
			// the SameSite=Strict cookie from a cross-site navigation.
			// Load the page again from here, and it sends it.
			s.render(w, r, http.StatusOK, "bounce", v, bounceView{Target: r.URL.RequestURI()})
			return
		}
		http.Redirect(w, r, "/login?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
	})
}

// member serves a route that needs a sign-in and is not a page to be sent
// back to (a form post, a live stream): others get 401.
func (s *Server) member(h handler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		v, ok := s.visitorOf(r)
		if !(ok && v.signedIn) && !(s.open(r) && ok) {
			s.fail(w, r, v, http.StatusUnauthorized, "Sign in first: this needs a console session.")
			return
		}
		h(w, r, v)
	}
}

// form checks a post's CSRF token (every form carries its visitor's) and
// its Origin, when the browser sent one; both must be this console's.
func (s *Server) form(h handler) handler {
	return func(w http.ResponseWriter, r *http.Request, v visitor) {
		r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
		if err := r.ParseForm(); err != nil {
			s.fail(w, r, v, http.StatusRequestEntityTooLarge, "The form could not be read (at most 64 KiB).")
			return
		}
		token := r.PostForm.Get("csrf")
		if v.csrf == "" || subtle.ConstantTimeCompare([]byte(token), []byte(v.csrf)) != 1 {
			s.fail(w, r, v, http.StatusForbidden, "The form's CSRF token is missing or stale: reload the page and try again.")
			return
		}
		if o := r.Header.Get("Origin"); o != "" && o != "null" {
			if u, err := url.Parse(o); err != nil || u.Host != r.Host {
				s.fail(w, r, v, http.StatusForbidden, "The form was posted from another site.")
				return
			}
		}
		h(w, r, v)
	}
}

// guestForm is a form post from any visitor with a session (sign-in).
func (s *Server) guestForm(h handler) http.HandlerFunc {
	f := s.form(h)
	return func(w http.ResponseWriter, r *http.Request) {
		v, ok := s.visitorOf(r)
		if !ok {
			s.fail(w, r, v, http.StatusForbidden, "Your console session expired (or cookies are off): reload the page and try again.")
			return
		}
		f(w, r, v)
	}
}

func (s *Server) loginPage(w http.ResponseWriter, r *http.Request, v visitor) {
	s.render(w, r, http.StatusOK, "login", v, loginView{
		Next: safeNext(r.URL.Query().Get("next")), Slack: s.cfg.SlackSignIn != nil,
		Keys: !s.keys.Empty(), Open: s.open(r), Error: r.URL.Query().Get("error"),
	})
}

type loginView struct {
	Next        string
	Slack, Keys bool
	Open        bool
	Error       string
}

// login signs in with an API key: a new session replaces the guest one.
func (s *Server) login(w http.ResponseWriter, r *http.Request, v visitor) {
	next := safeNext(r.PostForm.Get("next"))
	// The API's guard: the same key check, and wrong keys throttled per
	// client address with the API's (one budget of guesses for both).
	c, wait, ok := s.keys.Check(r.RemoteAddr, strings.TrimSpace(r.PostForm.Get("key")))
	if !ok {
		s.log.Info("console sign-in refused", tools.LogPath, r.URL.Path)
		status, msg := http.StatusUnauthorized, "That is not one of brain's API keys."
		if wait > 0 {
			secs := int(math.Ceil(wait.Seconds()))
			w.Header().Set("Retry-After", strconv.Itoa(secs))
			status, msg = http.StatusTooManyRequests, fmt.Sprintf("Too many wrong keys from this address; try again in %d s.", secs)
		}
		s.render(w, r, status, "login", v, loginView{Next: next, Slack: s.cfg.SlackSignIn != nil,
			Keys: !s.keys.Empty(), Open: s.open(r), Error: msg})
		return
	}
	s.signIn(w, r, v, visitor{signedIn: true, name: c.Name, by: c.Name, viaKey: true, admin: true}, next)
}

// signIn replaces old with the signed-in v and sends the browser to next.
// The answer is a page that loads next, not a redirect: after a Slack
// sign-in the chain began on slack.com, and a browser withholds the new
// SameSite=Strict cookie from a navigation a cross-site redirect led to.
func (s *Server) signIn(w http.ResponseWriter, r *http.Request, old, v visitor, next string) {
	if a := s.cfg.Audit; a != nil {
		by, viaKey := v.identity()
		if err := a.Record(r.Context(), by, "console.signed_in", "console", map[string]bool{"api_key": viaKey}); err != nil {
			s.log.Error("record console sign-in", tools.LogErr, err)
			s.fail(w, r, old, http.StatusInternalServerError, "The sign-in could not be recorded; try again.")
			return
		}
	}
	s.auth.drop(old.token)
	v = s.auth.put(v)
	s.setCookie(w, r, v)
	s.log.Info("console sign-in", tools.LogWho, v.name)
	s.render(w, r, http.StatusOK, "bounce", v, bounceView{Target: next})
}

func (s *Server) logout(w http.ResponseWriter, r *http.Request, v visitor) {
	s.auth.drop(v.token)
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: "", Path: "/", MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteStrictMode})
	http.Redirect(w, r, "/login", http.StatusSeeOther)
}

// safeNext keeps a post-sign-in destination on this site: a path with no
// scheme, host or user, that neither starts with "//" nor holds a
// backslash or a control character, in its raw form or once
// percent-decoded (up to three times). A browser drops tabs and newlines
// from a URL and reads a backslash as a slash, so "/%09/evil.example"
// or "/\\evil" would otherwise lead off-site. Anything else becomes "/".
func safeNext(next string) string {
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil || u.Opaque != "" {
		return "/"
	}
	form := next
	for range 4 {
		if !strings.HasPrefix(form, "/") || strings.HasPrefix(form, "//") ||
			strings.ContainsRune(form, '\\') || strings.ContainsFunc(form, unicode.IsControl) {
			return "/"
		}
		dec, err := url.PathUnescape(form)
		if err != nil {
			return "/"
		}
		if dec == form {
			return next
		}
		form = dec
	}
	return "/"
}
