package bot

import (
	"net/http"
	"strings"
	"testing"

	"brain/engine"
	"brain/engine/model/fakemodel"
)

// One human is one voter on every surface: an approvers entry names a
// person, and forbid_self refuses the requester's identities on GitHub and
// through the API alike.
func TestPeople_ApproverPersonAcrossGitHubAndAPI(t *testing.T) {
	ga := newGHAppMore(t, "token: "+ghToken, `approvals:
  approvers: [person:alice, person:bob]
  policies: [{name: not-self, tool: deploy, require: 1, forbid_self: true}]
`)
	ga.gh.mu.Lock()
	ga.gh.perms["bob-gh"] = "write"
	ga.gh.mu.Unlock()
	for _, link := range []struct{ person, surface, id string }{
		{"alice", "github", "alice"}, {"alice", "api", "alice-api"}, {"bob", "github", "bob-gh"},
	} {
		ga.must(http.StatusOK, "POST", "/v1/people", map[string]any{"id": link.person}, nil)
		ga.must(http.StatusOK, "POST", "/v1/people/"+link.person+"/identities", map[string]any{"surface": link.surface, "external_id": link.id}, nil)
	}
	ga.fake.Push(fakemodel.ToolCalls(fakemodel.Call{Name: "deploy"}), fakemodel.Text("Proposed the deploy."))
	ga.comment("alice", "@brainy deploy it", "", nil)
	ga.gh.waitComment(t, "**Approval needed**")
	ga.comment("alice", "/approve", "", nil)
	ga.gh.waitComment(t, "@alice alice may not approve their own request")

	var list struct{ Approvals []engine.Approval }
	ga.must(http.StatusOK, "GET", "/v1/approvals?status=pending", nil, &list)
	if len(list.Approvals) != 1 {
		t.Fatalf("pending approvals: %+v", list)
	}
	id := list.Approvals[0].ID
	status, _, body := ga.do("POST", "/v1/approvals/"+id+"/decision", map[string]any{"decision": "approve", "by": "alice-api"})
	if status != http.StatusForbidden || !strings.Contains(string(body), "person:alice, who asked for this") {
		t.Fatalf("alice through the API: %d %s", status, body)
	}
	status, _, body = ga.do("POST", "/v1/approvals/"+id+"/decision", map[string]any{"decision": "approve", "by": "mallory"})
	if status != http.StatusForbidden {
		t.Fatalf("a stranger through the API: %d %s", status, body)
	}
	if ga.applied.Load() != 0 {
		t.Fatal("applied before an allowed approval")
	}
	ga.comment("bob-gh", "/approve", "", nil)
	ga.gh.waitComment(t, "Approved by @bob-gh")
	ga.gh.waitComment(t, "Applied.") // the apply runs after the decision is shown
	if ga.applied.Load() != 1 {
		t.Fatalf("applied %d times", ga.applied.Load())
	}
}
