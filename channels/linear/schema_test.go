package linear

import (
	"os"
	"testing"

	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/validator/rules"
)

// documents is every GraphQL document the client sends.
var documents = map[string]string{
	"activityCreate": activityCreateMutation,
	"sessionUpdate":  sessionUpdateMutation,
	"viewer":         viewerQuery,
	"issue":          issueQuery,
	"issueUpdate":    issueUpdateMutation,
	"commentCreate":  commentCreateMutation,
	"agentSession":   agentSessionQuery,
	"workflowStates": workflowStatesQuery,
	"attachment":     attachmentCreateMutation,
}

// TestDocuments_ValidAgainstLinearSchema validates every document brain
// sends against Linear's published schema (linear/linear
// packages/sdk/src/schema.graphql, release 88.3.0, in testdata).
func TestDocuments_ValidAgainstLinearSchema(t *testing.T) {
	raw, err := os.ReadFile("testdata/linear-schema.graphql")
	if err != nil {
		t.Fatal(err)
	}
	schema, gerr := gqlparser.LoadSchema(&ast.Source{Name: "linear-schema.graphql", Input: string(raw)})
	if gerr != nil {
		t.Fatalf("load schema: %v", gerr)
	}
	for name, doc := range documents {
		if _, errs := gqlparser.LoadQueryWithRules(schema, doc, rules.NewDefaultRules()); len(errs) > 0 {
			t.Errorf("%s is not valid against Linear's schema: %v", name, errs)
		}
	}
	// The check can fail: a field Linear does not have is refused.
	if _, errs := gqlparser.LoadQueryWithRules(schema, `query { viewer { id noSuchField } }`, rules.NewDefaultRules()); len(errs) == 0 {
		t.Error("an invalid document passed validation")
	}
}
