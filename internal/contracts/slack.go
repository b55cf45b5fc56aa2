package contracts

import (
	"encoding/json"
	"net/url"
	"regexp"
	"sort"
	"strings"
)

// SlackImports brings in the request types of @slack/web-api, and Form:
// a form-encoded call (slack-go sends most methods as forms) may carry a
// boolean as 0 or 1, which the Web API takes; nothing else is loosened.
const SlackImports = `import type * as web from "@slack/web-api";
type Form<T> = T extends any ? { [K in keyof T]: T[K] extends boolean | undefined ? T[K] | 0 | 1 : T[K] } : never;`

// SlackType is the @slack/web-api request type of a Web API method, as a
// form may carry it ("chat.postMessage" ->
// "Form<web.ChatPostMessageArguments>").
func SlackType(method string) string {
	if method == "openid.connect.token" {
		return "Form<web.OpenIDConnectTokenArguments>"
	}
	var b strings.Builder
	b.WriteString("Form<web.")
	for _, part := range strings.Split(method, ".") {
		if part != "" {
			b.WriteString(strings.ToUpper(part[:1]) + part[1:])
		}
	}
	b.WriteString("Arguments>")
	return b.String()
}

var integer = regexp.MustCompile(`^-?[0-9]+$`)

// SlackBody turns the parameters of a Web API call, as a form carries them
// (slack-go sends most methods form-encoded), into the JSON object the
// Node SDK's types describe: JSON arrays and objects (blocks, views,
// chunks) decoded, "true"/"false" as booleans, integers as numbers.
// Timestamps ("1700000000.000100") stay strings, as the types want them.
func SlackBody(params url.Values) []byte {
	keys := make([]string, 0, len(params))
	for k := range params {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := map[string]any{}
	for _, k := range keys {
		v := params.Get(k)
		var decoded any
		switch {
		case (strings.HasPrefix(v, "[") || strings.HasPrefix(v, "{")) && json.Unmarshal([]byte(v), &decoded) == nil:
			out[k] = decoded
		case v == "true" || v == "false":
			out[k] = v == "true"
		case integer.MatchString(v) && k != "text":
			out[k] = json.Number(v)
		default:
			out[k] = v
		}
	}
	data, _ := json.Marshal(out)
	return data
}
