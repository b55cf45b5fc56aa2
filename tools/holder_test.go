package tools_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"brain/tools"
)

// people links slack identities to people; service maps providers to a
// service account.
type people struct {
	links   map[string]string
	service map[string]string
}

func (p people) PersonOf(_ context.Context, id tools.Identity) (string, bool, error) {
	if id.ExternalID == "broken" {
		return "", false, errors.New("store down")
	}
	person, ok := p.links[id.String()]
	return person, ok, nil
}

type withService struct{ people }

func (p withService) ServiceAccount(_ context.Context, provider string) (string, bool, error) {
	person, ok := p.service[provider]
	return person, ok, nil
}

func TestHolderOf(t *testing.T) {
	base := people{links: map[string]string{"slack:UA": "alice", "slack:UB": "bob"}, service: map[string]string{"http:t": "bob"}}
	slack := func(id string) tools.Identity { return tools.Identity{Surface: "slack", ExternalID: id} }
	sched := tools.Identity{Surface: tools.SurfaceSchedule, ExternalID: "nightly"}
	tests := []struct {
		name   string
		people tools.People
		call   tools.Call
		mode   string
		want   string // the person, or "err:<text>", or "connect"
	}{
		{"requester", base, tools.Call{Requester: slack("UA")}, "", "alice"},
		{"approver", base, tools.Call{Requester: slack("UA"), Approver: slack("UB")}, tools.ActsAsApprover, "bob"},
		{"approver outside an apply", base, tools.Call{Requester: slack("UA")}, tools.ActsAsApprover, "alice"},
		{"requester mode ignores the approver", base, tools.Call{Requester: slack("UA"), Approver: slack("UB")}, tools.ActsAsRequester, "alice"},
		{"linked to nobody", base, tools.Call{Requester: slack("UZ")}, "", "connect"},
		{"nobody asked", base, tools.Call{}, "", "err:nobody to act as"},
		{"lookup fails", base, tools.Call{Requester: slack("broken")}, "", "err:store down"},
		{"schedule without service accounts", base, tools.Call{Requester: sched}, "", "err:schedules never use a person's connection"},
		{"schedule with a service account", withService{base}, tools.Call{Requester: sched}, "", "bob"},
		{"schedule, none for this provider", withService{people{service: map[string]string{}}}, tools.Call{Requester: sched}, "", "err:service-account"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, err := tools.HolderOf(context.Background(), tt.people, tt.call, tt.mode, "tickets", "http:t")
			switch {
			case tt.want == "connect":
				cr, ok := tools.AsConnectionRequired(err)
				if !ok || cr.Identity != tt.call.Requester || cr.Provider != "http:t" {
					t.Fatalf("err = %v, want ConnectionRequired", err)
				}
			case strings.HasPrefix(tt.want, "err:"):
				var te *tools.Error
				if !errors.As(err, &te) || te.UnknownOutcome || !strings.Contains(te.Message, tt.want[4:]) || !strings.Contains(te.Message, "nothing was sent") {
					t.Fatalf("err = %v, want a tool error with %q", err, tt.want[4:])
				}
			case err != nil || h.Person != tt.want:
				t.Fatalf("HolderOf = %+v, %v; want %s", h, err, tt.want)
			}
		})
	}
	// Missing: a link for a person, a plain error for a service account.
	if _, ok := tools.AsConnectionRequired(tools.Holder{Person: "alice", Identity: slack("UA")}.Missing("tickets", "http:t")); !ok {
		t.Error("a person's missing connection is not a ConnectionRequired")
	}
	err := tools.Holder{Person: "bob", Identity: sched, Service: true}.Missing("tickets", "http:t")
	if _, ok := tools.AsConnectionRequired(err); ok || !strings.Contains(err.Error(), "service-account connection") {
		t.Errorf("a service account's missing connection = %v", err)
	}
}
