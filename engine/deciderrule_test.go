package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"brain/engine"
	"brain/store"
	"brain/store/sqlite"
	"brain/tools"
)

// storePeople is engine.People over the store's people tables, as the
// daemon wires it (bot/people.go): the decider filter reads the same
// links in SQL.
type storePeople struct{ st *sqlite.Store }

func (p storePeople) PersonOf(ctx context.Context, surface, id string) (string, error) {
	got, err := p.st.PersonByIdentity(ctx, store.Identity{Surface: surface, ExternalID: id})
	if errors.Is(err, engine.ErrNotFound) {
		return "", nil
	}
	return got.ID, err
}

func withStorePeople() harnessOption {
	return func(c *engine.Config, _ *engine.Agent) { c.People = storePeople{c.Store.(*sqlite.Store)} }
}

// withAgent adds an agent with approvers, on the default agent's model.
func withAgent(name string, approvers ...string) harnessOption {
	return func(c *engine.Config, a *engine.Agent) {
		c.Agents = append(c.Agents, &engine.Agent{Name: name, Model: a.Model, Instructions: "Another agent.", Approvers: approvers})
	}
}

// TestEngine_DeciderFilterIsTheRule: over a generated set of people,
// links, sessions and approvals, the approvals the database's decider
// filter finds for a decision are exactly those the rule (MayDecide, as
// Decide authorizes) accepts, for every identity deciding from every
// surface: nothing the rule accepts is missed (a session started through
// another identity of the person, an approvers entry "person:ID"), and
// nothing it refuses is listed.
func TestEngine_DeciderFilterIsTheRule(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, withStorePeople(), withAgent("deploy", "person:p1", "U2"), withAgent("ops", "person:p2"))
	rng := rand.New(rand.NewPCG(33, 1))
	ids := []string{"U1", "U2", "U3", "k1", "k2", "l1", "g1"}
	surfaces := []string{engine.SurfaceSlack, engine.SurfaceAPI, engine.SurfaceConsole, engine.SurfaceLinear, engine.SurfaceGitHub}
	people := []string{"p1", "p2", "p3"}
	for _, p := range people {
		if err := h.store.SavePerson(ctx, store.Person{ID: p, Name: "Sam", UpdatedAt: h.now}); err != nil {
			t.Fatal(err)
		}
	}
	for _, surface := range surfaces {
		for _, id := range ids {
			if rng.IntN(3) != 0 {
				continue
			}
			if err := h.store.LinkIdentity(ctx, h.now, people[rng.IntN(len(people))], store.Identity{Surface: surface, ExternalID: id}); err != nil {
				t.Fatal(err)
			}
		}
	}
	origins := []engine.Origin{engine.OriginSlack, engine.OriginAPI, engine.OriginConsole, engine.OriginLinear}
	agents := []string{"default", "deploy", "ops", "gone"} // default: no approvers; gone: not configured
	at := h.now
	for i := range 40 {
		starter := ""
		if rng.IntN(8) != 0 {
			starter = ids[rng.IntN(len(ids))]
		}
		s, _, err := h.eng.CreateSession(ctx, engine.NewSession{Agent: "default", Origin: origins[rng.IntN(len(origins))], Interactive: true, StartedBy: starter})
		if err != nil {
			t.Fatal(err)
		}
		at = at.Add(time.Second)
		a := engine.Approval{ID: fmt.Sprintf("a-%02d", i), CallID: fmt.Sprintf("call-%02d", i), Tool: "deploy", Agent: agents[rng.IntN(len(agents))],
			Input: json.RawMessage(`{}`), Card: tools.Card{Title: "Deploy"}, Status: engine.ApprovalPending,
			CreatedAt: at, UpdatedAt: at, ExpiresAt: at.Add(time.Hour)}
		if _, err := h.store.Commit(ctx, engine.Commit{SessionID: s.ID, Now: at, NewApproval: &a,
			Events: []engine.Event{{ID: "req-" + a.ID, Type: engine.EventApprovalRequested}}}); err != nil {
			t.Fatal(err)
		}
	}
	every, err := h.store.Approvals(ctx, engine.ApprovalFilter{Statuses: []engine.ApprovalStatus{engine.ApprovalPending}})
	if err != nil {
		t.Fatal(err)
	}

	var decisions []engine.Decision
	for _, id := range append(ids, "nobody-known") {
		for _, surface := range []string{engine.SurfaceSlack, engine.SurfaceLinear, engine.SurfaceGitHub, engine.SurfaceConsole} {
			decisions = append(decisions, engine.Decision{By: id, Surface: surface})
		}
		decisions = append(decisions, engine.Decision{By: id, Surface: engine.SurfaceAPI, ViaAPI: true}) // a key holder
	}
	var throughPerson int // allowed only through a link: the case the filter once missed
	for _, d := range decisions {
		var want []string
		for _, a := range every {
			if h.eng.MayDecide(ctx, a.ID, d) == nil {
				want = append(want, a.ID)
				s, err := h.eng.Session(ctx, a.SessionID)
				if err != nil {
					t.Fatal(err)
				}
				raw := (d.ViaAPI && (s.Origin == engine.OriginAPI || s.Origin == engine.OriginConsole)) ||
					(a.Agent == "deploy" && d.By == "U2") || ((a.Agent == "default" || a.Agent == "gone") && s.StartedBy == d.By)
				if !raw {
					throughPerson++
				}
			}
		}
		filter, err := h.eng.Decider(ctx, d)
		if err != nil {
			t.Fatal(err)
		}
		found, err := h.store.Approvals(ctx, engine.ApprovalFilter{Statuses: []engine.ApprovalStatus{engine.ApprovalPending}, Decider: &filter})
		if err != nil {
			t.Fatal(err)
		}
		if got := approvalIDs(found); !slices.Equal(got, want) {
			t.Errorf("%s on %s (via API %v): the filter finds %v, the rule accepts %v", d.By, d.Surface, d.ViaAPI, got, want)
		}
		listed, err := h.eng.DecidableApprovals(ctx, d, len(every))
		if err != nil {
			t.Fatal(err)
		}
		if got := approvalIDs(listed); !slices.Equal(got, want) {
			t.Errorf("%s on %s (via API %v): DecidableApprovals lists %v, the rule accepts %v", d.By, d.Surface, d.ViaAPI, got, want)
		}
	}
	if throughPerson == 0 {
		t.Fatal("the generated set has no approval decided through a person's other identity or a person:ID entry; it proves nothing")
	}
	t.Logf("%d decisions over %d approvals; %d allowed through a person", len(decisions), len(every), throughPerson)
}

// TestEngine_DeciderNeedsASurface: the person behind an identity depends
// on its surface, so a filter without one is refused, not guessed.
func TestEngine_DeciderNeedsASurface(t *testing.T) {
	h := newHarness(t)
	if _, err := h.eng.DecidableApprovals(context.Background(), engine.Decision{By: "U1"}, 10); !errors.Is(err, engine.ErrInvalid) {
		t.Fatalf("DecidableApprovals without a surface: %v, want invalid", err)
	}
}

func approvalIDs(as []engine.Approval) []string {
	var out []string
	for _, a := range as {
		out = append(out, a.ID)
	}
	return out
}
