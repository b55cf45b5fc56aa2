package mcp

import (
	"context"
	"errors"

	"brain/internal/oauthclient"
	"brain/tools"
)

// A per-person server (OAuth.PerPerson) gets one MCP session per person,
// opened with that person's connection on their first call and kept for
// the next ones, rather than one shared session with a bearer swapped per
// request: the MCP spec has servers bind a session to the user who opened
// it (a session opened with Bob's token and then sent Alice's is refused,
// or worse, mixes them), and what a server sends within a session
// (notifications, elicitations) belongs to one person. The server's own
// connection (s.conn) is only used to read the tool list; a call is never
// sent through it.

// connFor is the connection a call goes through: the server's, or, for
// a per-person server, the session of the person the call acts as
// (tools.HolderOf: a schedule's call goes through the provider's
// service-account connection, or nowhere). A person without a usable
// connection gets a tools.ConnectionRequired; nothing was sent.
func (s *server) connFor(ctx context.Context, name string, call tools.Call) (*conn, error) {
	o := s.cfg.OAuth
	if o == nil || !o.PerPerson {
		c := s.current()
		if c == nil {
			return nil, tools.Failed("%s: the MCP server %s is not connected; nothing was sent", name, s.cfg.ID)
		}
		return c, nil
	}
	h, err := tools.HolderOf(ctx, o.People, call, o.actsAs(), name, o.Provider)
	if err != nil {
		return nil, err
	}
	required := h.Missing(name, o.Provider)
	tokens := o.TokensFor(h.Person)
	if _, have, err := tokens.Token(ctx); err != nil {
		return nil, tools.Failed("%s: read the connection: %v; nothing was sent", name, err)
	} else if !have {
		return nil, required
	}
	return s.personConn(ctx, name, h.Person, tokens, required)
}

func (o *OAuth) actsAs() string {
	if o.ActsAs == "" {
		return tools.ActsAsRequester
	}
	return o.ActsAs
}

// personConn returns the person's live session, opening one when there
// is none (or it was lost).
func (s *server) personConn(ctx context.Context, name, person string, tokens oauthclient.Tokens, required error) (*conn, error) {
	s.pmu.Lock()
	c := s.people[person]
	s.pmu.Unlock()
	if c != nil && !c.lost.Load() {
		return c, nil
	}
	// Connecting happens outside the lock (it waits on the server); two
	// first calls of one person may both connect, and one keeps its own.
	nc, _, err := s.connectAs(ctx, tokens)
	if err != nil {
		if needsConnection(err) || errors.Is(err, oauthclient.ErrRefused) {
			return nil, required
		}
		return nil, tools.Failed("%s: connect to the MCP server %s as the person who asked: %s; nothing was sent",
			name, s.cfg.ID, s.scrub.String(err.Error()))
	}
	s.pmu.Lock()
	defer s.pmu.Unlock()
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		nc.close()
		return nil, tools.Failed("%s: brain is stopping; nothing was sent", name)
	}
	if old := s.people[person]; old != nil && !old.lost.Load() {
		nc.close()
		return old, nil
	}
	if old := s.people[person]; old != nil {
		old.close()
	}
	if s.people == nil {
		s.people = map[string]*conn{}
	}
	s.people[person] = nc
	return nc, nil
}

// refusedPerson turns a per-person call the server refused for want of
// authorization (revoked upstream, short of scope) into a
// ConnectionRequired; nil for anything else.
func (s *server) refusedPerson(ctx context.Context, name string, call tools.Call, err error) error {
	o := s.cfg.OAuth
	if o == nil || !o.PerPerson || !needsConnection(err) {
		return nil
	}
	h, herr := tools.HolderOf(ctx, o.People, call, o.actsAs(), name, o.Provider)
	if herr != nil {
		return herr
	}
	return h.Missing(name, o.Provider)
}

// closePeople ends every person's session (shutdown).
func (s *server) closePeople() {
	s.pmu.Lock()
	people := s.people
	s.people = nil
	s.pmu.Unlock()
	for _, c := range people {
		c.close()
	}
}
