package github

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Schema pieces shared by the tools' input schemas.
const (
	repoProp   = `"repo":{"type":"string","pattern":"^[A-Za-z0-9-]+/[A-Za-z0-9._-]+$","description":"owner/name; must be in the configured allow-list"}`
	numberProp = `"number":{"type":"integer","minimum":1,"description":"the issue or pull request number"}`
	limitProp  = `"limit":{"type":"integer","minimum":1,"maximum":100,"description":"at most this many items (default 20)"}`
	labelsProp = `"labels":{"type":"array","items":{"type":"string","minLength":1,"maxLength":100},"maxItems":50}`
	queryProp  = `"query":{"type":"string","minLength":1,"maxLength":256,"description":"GitHub search syntax; it is confined to the allowed repositories"}`
)

// schema builds an object schema from property snippets and required names.
func schema(required []string, props ...string) json.RawMessage {
	req, _ := json.Marshal(required)
	if required == nil {
		req = []byte("[]")
	}
	return json.RawMessage(fmt.Sprintf(`{"type":"object","properties":{%s},"required":%s}`, strings.Join(props, ","), req))
}

// defaultLimit is how many items a list shows when the model asks for no limit.
const defaultLimit = 20

func limitOf(n int) int {
	if n <= 0 {
		return defaultLimit
	}
	return min(n, 100)
}
