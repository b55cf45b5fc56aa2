package web

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"time"

	"brain/engine"
	"brain/store"
	"brain/tools"
)

// The connections page: a signed-in person's accounts connected with
// OAuth (provider, account, scope, expiry, status; never a token), a
// Connect button for each provider they may connect, and Revoke. Admins
// also see everyone's (and the workspace's), revoke any, and connect the
// workspace's providers.
//
// Links sent on surfaces others read (a Linear elicitation, a GitHub
// reply, a console session's page) lead here, never to the provider:
// /connections?connect=PROVIDER&for=PERSON. The flow starts only for the
// person signed in, and only when they are the person the link names, so
// Mallory following Alice's link connects nothing to Alice.

// Connections is what the connections page asks of brain: the people and
// their connections (the store's) and the connect flows (bot/connect).
type Connections interface {
	PersonByIdentity(ctx context.Context, id store.Identity) (store.Person, error)
	Person(ctx context.Context, id string) (store.Person, error)
	SavePerson(ctx context.Context, p store.Person) error
	LinkIdentity(ctx context.Context, now time.Time, personID string, id store.Identity) error
	ConnectionsOf(ctx context.Context, personID string, all bool) ([]store.Connection, error)
	ConnectionByID(ctx context.Context, id string) (store.Connection, error)
	RevokeConnection(ctx context.Context, now time.Time, id, problem string) (changed bool, err error)
	// Providers are the accounts that may be connected, sorted by name.
	Providers() []ConnectProvider
	// Connect starts connecting personID ("" the workspace) to provider
	// and returns the URL to send the browser to.
	Connect(ctx context.Context, personID, provider string, from *ConnectOrigin) (string, error)
}

// ConnectProvider is an account brain can connect.
type ConnectProvider struct {
	Name string
	// PerPerson: each person connects their own; else one connection for
	// the workspace, connected by an admin.
	PerPerson bool
}

// ConnectOrigin is the tool call a link was sent for (bot/connect's
// Origin): once connected, its session says so and offers the retry.
// Return is where the browser goes after the provider sent it back.
type ConnectOrigin struct {
	SessionID, CallID, Tool string
	Surface, ExternalID     string
	Return                  string
}

// ConnectPath is the connections page; ConnectLink builds the links other
// surfaces send.
const ConnectPath = "/connections"

// ConnectLink is the link to the connections page that offers person the
// connection to provider a tool call (callID of tool, in session) needed.
func ConnectLink(publicURL, provider, person, session, callID, tool string) string {
	q := url.Values{"connect": {provider}, "for": {person}}
	if session != "" {
		q.Set("session", session)
		q.Set("call", callID)
		q.Set("tool", tool)
	}
	return strings.TrimRight(publicURL, "/") + ConnectPath + "?" + q.Encode()
}

// connectParam bounds what a link may carry: provider names, person,
// session and call ids, tool names. The tool's name is said to the model
// in a retry, so nothing else gets through.
var connectParam = regexp.MustCompile(`^[A-Za-z0-9_.:@-]{1,200}$`)

func validParam(s string) bool { return s == "" || connectParam.MatchString(s) }

// connectionView is a connection as the page shows it: no tokens.
type connectionView struct {
	ID, Person, Provider, Account, Scope string
	Expires                              time.Time
	Status, Problem                      string
	Mine                                 bool
}

func viewConnections(cs []store.Connection, me string) []connectionView {
	out := make([]connectionView, 0, len(cs))
	for _, c := range cs {
		out = append(out, connectionView{ID: c.ID, Person: c.PersonID, Provider: c.Provider, Account: c.Account, Scope: c.Scope,
			Expires: c.ExpiresAt, Status: c.Status, Problem: c.Problem, Mine: me != "" && c.PersonID == me})
	}
	return out
}

// pendingLink is a link followed from another surface, shown for the
// person to confirm (or refused).
type pendingLink struct {
	Provider, For, Session, Call, Tool string
	// Refused says why the link cannot be used by this visitor.
	Refused string
}

type connectionsView struct {
	Configured bool
	Person     string // the visitor's person ("" none yet)
	Mine       []connectionView
	Everyone   []connectionView // admins only
	Providers  []ConnectProvider
	Link       *pendingLink
	Notice     string
}

// visitorIdentities are the identities a visitor is known by: a Slack
// sign-in's Slack user, in Slack and in the console (console sessions
// record them by it); a key holder (or this host) by the key's name in the
// console and the API.
func visitorIdentities(v visitor) []store.Identity {
	by, viaKey := v.identity()
	if !viaKey {
		return []store.Identity{{Surface: store.SurfaceSlack, ExternalID: by}, {Surface: store.SurfaceConsole, ExternalID: by}}
	}
	return []store.Identity{{Surface: store.SurfaceAPI, ExternalID: by}, {Surface: store.SurfaceConsole, ExternalID: by}}
}

// owns reports whether personID is the visitor: one of the person's
// identities is one the visitor signed in as. A link names the person a
// tool call found (perhaps made for the console identity alone), so this
// is asked rather than comparing with personOf.
func (s *Server) owns(ctx context.Context, v visitor, personID string) (bool, error) {
	p, err := s.cfg.Connections.Person(ctx, personID)
	if errors.Is(err, engine.ErrNotFound) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	for _, mine := range visitorIdentities(v) {
		for _, id := range p.Identities {
			if mine.ExternalID != "" && id == mine {
				return true, nil
			}
		}
	}
	return false, nil
}

// personOf is the person the visitor is linked to ("" none).
func (s *Server) personOf(ctx context.Context, v visitor) (store.Person, error) {
	for _, id := range visitorIdentities(v) {
		if id.ExternalID == "" {
			continue
		}
		p, err := s.cfg.Connections.PersonByIdentity(ctx, id)
		if err == nil {
			return p, nil
		}
		if !errors.Is(err, engine.ErrNotFound) {
			return store.Person{}, err
		}
	}
	return store.Person{}, nil
}

// ensurePerson is the visitor's person, made (and linked to the identity
// they signed in with) when there is none, as a Slack connect button does.
func (s *Server) ensurePerson(ctx context.Context, v visitor) (store.Person, error) {
	p, err := s.personOf(ctx, v)
	if err != nil || p.ID != "" {
		return p, err
	}
	// Linked to every identity the visitor signed in as (none is linked
	// to anyone yet), so their calls in Slack, the console and the API
	// find this connection.
	ids := visitorIdentities(v)
	now := s.now()
	p = store.Person{ID: "person_" + newToken()[:16], Name: v.name, CreatedAt: now, UpdatedAt: now}
	if p.Name == "" {
		p.Name = ids[0].ExternalID
	}
	if err := s.cfg.Connections.SavePerson(ctx, p); err != nil {
		return store.Person{}, err
	}
	for _, id := range ids {
		if err := s.cfg.Connections.LinkIdentity(ctx, now, p.ID, id); err != nil {
			return store.Person{}, err
		}
	}
	p.Identities = ids
	return p, nil
}

func (s *Server) connectionsPage(w http.ResponseWriter, r *http.Request, v visitor) {
	vw := connectionsView{Configured: s.cfg.Connections != nil, Notice: r.URL.Query().Get("notice")}
	if s.cfg.Connections == nil {
		s.render(w, r, http.StatusOK, "connections", v, vw)
		return
	}
	ctx := r.Context()
	me, err := s.personOf(ctx, v)
	if err != nil {
		s.internal(w, r, v, err)
		return
	}
	vw.Person = me.ID
	if me.ID != "" {
		cs, err := s.cfg.Connections.ConnectionsOf(ctx, me.ID, false)
		if err != nil {
			s.internal(w, r, v, err)
			return
		}
		vw.Mine = viewConnections(cs, me.ID)
	}
	admin := s.admin(r, v)
	if admin {
		cs, err := s.cfg.Connections.ConnectionsOf(ctx, "", true)
		if err != nil {
			s.internal(w, r, v, err)
			return
		}
		sort.SliceStable(cs, func(i, j int) bool { return cs[i].PersonID < cs[j].PersonID })
		vw.Everyone = viewConnections(cs, me.ID)
	}
	for _, p := range s.cfg.Connections.Providers() {
		if p.PerPerson || admin {
			vw.Providers = append(vw.Providers, p)
		}
	}
	if q := r.URL.Query(); q.Get("connect") != "" {
		if vw.Link, err = s.checkLink(ctx, v, q); err != nil {
			s.internal(w, r, v, err)
			return
		}
	}
	s.render(w, r, http.StatusOK, "connections", v, vw)
}

// checkLink reads a link followed from another surface: it is for the
// person signed in, or it is refused with why.
func (s *Server) checkLink(ctx context.Context, v visitor, q url.Values) (*pendingLink, error) {
	l := &pendingLink{Provider: q.Get("connect"), For: q.Get("for"), Session: q.Get("session"), Call: q.Get("call"), Tool: q.Get("tool")}
	for _, p := range []string{l.Provider, l.For, l.Session, l.Call, l.Tool} {
		if !validParam(p) {
			return &pendingLink{Refused: "This link is not one brain made."}, nil
		}
	}
	if l.For == "" {
		return l, nil
	}
	if mine, err := s.owns(ctx, v, l.For); err != nil || !mine {
		l.Refused = "This link was made for someone else: it connects an account for the person it names, and you are signed in as another. " +
			"Nothing was connected. If it is yours, sign in as yourself (an admin can link your Slack, Linear and GitHub identities to one person)."
		return l, err
	}
	return l, nil
}

// startConnect starts a flow for the signed-in person (or, for an admin,
// the workspace) and sends the browser to the provider. A link's person
// must be the visitor's.
func (s *Server) startConnect(w http.ResponseWriter, r *http.Request, v visitor) {
	if s.cfg.Connections == nil {
		s.fail(w, r, v, http.StatusNotFound, "Connections are not kept by this server.")
		return
	}
	ctx := r.Context()
	f := r.PostForm
	provider, forPerson := f.Get("provider"), f.Get("for")
	sid, callID, tool := f.Get("session"), f.Get("call"), f.Get("tool")
	for _, p := range []string{provider, forPerson, sid, callID, tool} {
		if !validParam(p) {
			s.fail(w, r, v, http.StatusBadRequest, "That is not a provider or link brain made.")
			return
		}
	}
	var p ConnectProvider
	for _, c := range s.cfg.Connections.Providers() {
		if c.Name == provider {
			p = c
		}
	}
	if p.Name == "" {
		s.fail(w, r, v, http.StatusNotFound, "No provider "+provider+" to connect.")
		return
	}
	person := ""
	if p.PerPerson && forPerson != "" {
		// Checked before anything is stored: a link followed by someone
		// else makes nothing, not even a person record.
		mine, err := s.owns(ctx, v, forPerson)
		if err != nil {
			s.internal(w, r, v, err)
			return
		}
		if !mine {
			s.log.Warn("console connect refused: the link was for another person", tools.LogProvider, provider, tools.LogWho, v.name)
			s.fail(w, r, v, http.StatusForbidden, "This link was made for someone else; nothing was connected. Sign in as the person it was sent to.")
			return
		}
		person = forPerson
	} else if p.PerPerson {
		me, err := s.ensurePerson(ctx, v)
		if err != nil {
			s.internal(w, r, v, err)
			return
		}
		person = me.ID
	} else if !s.admin(r, v) {
		s.fail(w, r, v, http.StatusForbidden, provider+" has one connection for the workspace: only console admins connect it.")
		return
	}
	from := &ConnectOrigin{Return: ConnectPath + "?" + url.Values{"notice": {"Connected " + provider + "."}}.Encode()}
	if sid != "" && person != "" {
		if o, ok := s.linkOrigin(ctx, r, v, person, sid, callID, tool, provider); ok {
			from = o
		}
	}
	by, _ := v.identity()
	if a := s.cfg.Audit; a != nil {
		if err := a.Record(ctx, by, "connection.connect_started", provider, map[string]string{"person": person}); err != nil {
			s.log.Error("record console connect", tools.LogErr, err)
			s.fail(w, r, v, http.StatusInternalServerError, "The act could not be recorded; nothing was started.")
			return
		}
	}
	u, err := s.cfg.Connections.Connect(ctx, person, provider, from)
	if err != nil {
		s.engineError(w, r, v, err)
		return
	}
	s.log.Info("console started a connection", tools.LogProvider, provider, tools.LogWho, v.name)
	// A page that loads the provider, not a redirect: form-action 'self'
	// would stop a form post redirected to another site.
	s.render(w, r, http.StatusOK, "bounce", v, bounceView{Target: u})
}

// linkOrigin is the tool call a link was sent for, when the visitor may
// see its session: after connecting, a console session's page offers the
// retry, and Slack, Linear or GitHub say so in the thread.
func (s *Server) linkOrigin(ctx context.Context, r *http.Request, v visitor, person, sid, callID, tool, provider string) (*ConnectOrigin, bool) {
	ss, err := s.cfg.Engine.Session(ctx, sid)
	if err != nil {
		return nil, false
	}
	if ok, err := s.maySee(ctx, r, v, ss); err != nil || !ok {
		return nil, false
	}
	o := &ConnectOrigin{SessionID: ss.ID, CallID: callID, Tool: tool, Surface: string(ss.Origin)}
	if p, err := s.cfg.Connections.Person(ctx, person); err == nil {
		for _, id := range p.Identities {
			if id.Surface == o.Surface {
				o.ExternalID = id.ExternalID
			}
		}
	}
	o.Return = ConnectPath + "?" + url.Values{"notice": {"Connected " + provider + "; the session was told."}}.Encode()
	if ss.Origin == engine.OriginConsole || ss.Origin == engine.OriginAPI {
		o.Return = "/sessions/" + url.PathEscape(ss.ID) + "?" + url.Values{"connected": {provider}, "call": {callID}, "tool": {tool}}.Encode()
	}
	return o, true
}

// revokeConnection revokes one of the visitor's connections (an admin's:
// anyone's), recorded first in the audit trail.
func (s *Server) revokeConnection(w http.ResponseWriter, r *http.Request, v visitor) {
	if s.cfg.Connections == nil {
		s.fail(w, r, v, http.StatusNotFound, "Connections are not kept by this server.")
		return
	}
	ctx := r.Context()
	c, err := s.cfg.Connections.ConnectionByID(ctx, r.PathValue("id"))
	if errors.Is(err, engine.ErrNotFound) {
		s.fail(w, r, v, http.StatusNotFound, "Connection not found.")
		return
	} else if err != nil {
		s.internal(w, r, v, err)
		return
	}
	me, err := s.personOf(ctx, v)
	if err != nil {
		s.internal(w, r, v, err)
		return
	}
	mine := me.ID != "" && c.PersonID == me.ID
	if !mine && !s.admin(r, v) {
		// Worded as a missing one: an id tells nothing of others'.
		s.fail(w, r, v, http.StatusNotFound, "Connection not found.")
		return
	}
	by, _ := v.identity()
	if a := s.cfg.Audit; a != nil {
		if err := a.Record(ctx, by, "connection.revoked", c.ID, map[string]string{"person": c.PersonID, "provider": c.Provider}); err != nil {
			s.log.Error("record console revoke", tools.LogErr, err)
			s.fail(w, r, v, http.StatusInternalServerError, "The act could not be recorded; nothing was revoked.")
			return
		}
	}
	problem := "revoked by its person in the console"
	if !mine {
		problem = "revoked by " + v.name + " in the console"
	}
	if _, err := s.cfg.Connections.RevokeConnection(ctx, s.now(), c.ID, problem); err != nil {
		s.engineError(w, r, v, err)
		return
	}
	s.log.Info("console revoked a connection", tools.LogConnection, c.ID, tools.LogProvider, c.Provider, tools.LogWho, v.name)
	notice := "Revoked the connection to " + c.Provider + ": brain forgot its tokens."
	http.Redirect(w, r, ConnectPath+"?"+url.Values{"notice": {notice}}.Encode(), http.StatusSeeOther)
}
