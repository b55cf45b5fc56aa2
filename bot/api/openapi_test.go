package api_test

import (
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// routesInSource reads the /v1 patterns routes() registers, so a route
// added there without documentation fails this test.
func routesInSource(t *testing.T) []string {
	t.Helper()
	src, err := os.ReadFile("server.go")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range regexp.MustCompile(`(?:mux\.HandleFunc|handle)\("([A-Z]+ /v1/[^"]*)"`).FindAllStringSubmatch(string(src), -1) {
		out = append(out, m[1])
	}
	if len(out) < 10 {
		t.Fatalf("found only %d routes in server.go", len(out))
	}
	return out
}

func TestOpenAPI_MatchesTheRoutes(t *testing.T) {
	s := newServer(t, &fakeEngine{}, &fakeSchedules{})
	w := s.do("GET", "/v1/openapi.json", "")
	if w.Code != 200 {
		t.Fatalf("%d %s", w.Code, w.Body)
	}
	var doc struct {
		OpenAPI string                                `json:"openapi"`
		Paths   map[string]map[string]json.RawMessage `json:"paths"`
		Comps   struct {
			Schemas map[string]json.RawMessage `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.OpenAPI != "3.1.0" {
		t.Errorf("openapi %q", doc.OpenAPI)
	}
	var documented []string
	for path, ops := range doc.Paths {
		for method := range ops {
			documented = append(documented, strings.ToUpper(method)+" "+path)
		}
	}
	routes := routesInSource(t)
	for _, r := range routes {
		if !slices.Contains(documented, r) {
			t.Errorf("route %s is not in the OpenAPI document", r)
		}
	}
	for _, d := range documented {
		if !slices.Contains(routes, d) {
			t.Errorf("the OpenAPI document has %s, which is not a route", d)
		}
	}
	// Every $ref resolves.
	refs := regexp.MustCompile(`"#/components/schemas/([A-Za-z]+)"`).FindAllStringSubmatch(w.Body.String(), -1)
	if len(refs) < 10 {
		t.Errorf("only %d $refs", len(refs))
	}
	for _, m := range refs {
		if _, ok := doc.Comps.Schemas[m[1]]; !ok {
			t.Errorf("dangling $ref %s", m[1])
		}
	}
}
