package githubhook

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// examplesFile is GitHub's published example payloads, from the pinned npm
// package @octokit/webhooks-examples (make test-deps installs it).
const examplesFile = "testdata/examples/node_modules/@octokit/webhooks-examples/api.github.com/index.json"

// example is one of GitHub's example deliveries: the event name and the
// raw payload.
type example struct {
	Event string
	Body  []byte
}

// examples returns GitHub's example payloads of event whose action is
// action ("" any), as raw JSON.
func examples(t testing.TB, event, action string) []example {
	t.Helper()
	all, err := loadExamples()
	if err != nil {
		t.Fatalf("GitHub's example payloads are missing (run make test-deps): %v", err)
	}
	var out []example
	for _, e := range all {
		if e.Name != event {
			continue
		}
		for _, ex := range e.Examples {
			var a struct {
				Action string `json:"action"`
			}
			_ = json.Unmarshal(ex, &a)
			if action == "" || a.Action == action {
				out = append(out, example{event, ex})
			}
		}
	}
	if len(out) == 0 {
		t.Fatalf("no example %s.%s", event, action)
	}
	return out
}

// Example returns the first of GitHub's example payloads of event.action
// with fields set by edit (a map over the decoded JSON), re-encoded. Other
// packages' tests use it through ExampleWith.
func exampleWith(t testing.TB, event, action string, edit func(map[string]any)) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(examples(t, event, action)[0].Body, &m); err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		edit(m)
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

type exampleEvent struct {
	Name     string            `json:"name"`
	Examples []json.RawMessage `json:"examples"`
}

// loadExamples reads the examples file once (it is a few megabytes).
var loadExamples = sync.OnceValues(func() ([]exampleEvent, error) {
	raw, err := os.ReadFile(filepath.FromSlash(examplesFile))
	if err != nil {
		return nil, err
	}
	var all []exampleEvent
	return all, json.Unmarshal(raw, &all)
})
