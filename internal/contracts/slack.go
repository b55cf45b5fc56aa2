package contracts

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
)

// SlackImports brings in the request types of @slack/web-api, the event
// types of @slack/types, the interaction payload types of @slack/bolt, and
// Form:
// a form-encoded call (slack-go sends most methods as forms) may carry a
// boolean as 0 or 1, which the Web API takes. FileShareEvent is the SDK's
// file_share message with what Slack's recorded payloads
// (testdata/slack-payloads) carry and @slack/types 3.2.0 lacks: the
// message's client_msg_id, a file's timestamp, media_display_type,
// thumb_tiny and thumbnail sizes, and channels and groups left out.
// Nothing else is loosened.
const SlackImports = `import type * as web from "@slack/web-api";
import type * as types from "@slack/types";
import type * as bolt from "@slack/bolt";
type Form<T> = T extends any ? { [K in keyof T]: T[K] extends boolean | undefined ? T[K] | 0 | 1 : T[K] } : never;
type SDKFile = NonNullable<types.FileShareMessageEvent["files"]>[number];
type SharedFile = Omit<SDKFile, "channels" | "groups"> & Partial<Pick<SDKFile, "channels" | "groups">> & { timestamp?: number; media_display_type?: string; thumb_tiny?: string; [thumb: ` + "`thumb_${number}`" + `]: string; [size: ` + "`thumb_${number}_${\"w\" | \"h\"}`" + `]: number };
type FileShareEvent = Omit<types.FileShareMessageEvent, "files"> & { client_msg_id?: string; files?: SharedFile[] };`

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

// SlackCalls collects the distinct Web API calls a test package sent to its
// fake Slack, to be type-checked once its tests have run (CheckMain).
type SlackCalls struct {
	mu     sync.Mutex
	seen   map[string]bool // method + body: each distinct body is checked once
	bodies []Body
}

// Record adds a call (its token parameter left out: slack-go sends the
// token as a bearer header).
func (c *SlackCalls) Record(method string, params url.Values) {
	clean := url.Values{}
	for k, v := range params {
		if k != "token" {
			clean[k] = v
		}
	}
	body := SlackBody(clean)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.seen == nil {
		c.seen = map[string]bool{}
	}
	if key := method + " " + string(body); !c.seen[key] {
		c.seen[key] = true
		c.bodies = append(c.bodies, Body{Name: method, Type: SlackType(method), JSON: body})
	}
}

// RecordEvent adds the event of an Events API payload a test sent to
// brain (an event_callback's inner event), to be checked against
// @slack/types' SlackEvent: what the fake says Slack sends is what Slack's
// own types say it sends.
func (c *SlackCalls) RecordEvent(payload []byte) {
	var envelope struct {
		Type  string          `json:"type"`
		Event json.RawMessage `json:"event"`
	}
	if json.Unmarshal(payload, &envelope) != nil || envelope.Type != "event_callback" || len(envelope.Event) == 0 {
		return
	}
	var event struct {
		Type    string  `json:"type"`
		Subtype *string `json:"subtype"`
	}
	_ = json.Unmarshal(envelope.Event, &event)
	typ := "types.SlackEvent"
	if event.Type == "message" && event.Subtype != nil && *event.Subtype == "file_share" {
		typ = "FileShareEvent"
	}
	if event.Type == "message" && event.Subtype == nil {
		// The SDK declares a plain message's subtype as a required
		// undefined, which JSON cannot carry: everything else is checked.
		typ = `Omit<types.GenericMessageEvent, "subtype">`
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.seen == nil {
		c.seen = map[string]bool{}
	}
	if key := "event " + string(envelope.Event); !c.seen[key] {
		c.seen[key] = true
		c.bodies = append(c.bodies, Body{Name: "event " + event.Type, Type: typ, JSON: envelope.Event})
	}
}

// RecordInteraction adds the payload of an interaction a test posted to
// /slack/interactions (the form's payload field), to be checked against
// @slack/bolt's types: a block_actions against BlockAction, a
// view_submission against ViewSubmitAction. Other types are not recorded.
func (c *SlackCalls) RecordInteraction(form []byte) {
	values, err := url.ParseQuery(string(form))
	if err != nil {
		return
	}
	payload := []byte(values.Get("payload"))
	name, typ := InteractionType(payload)
	if typ == "" {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.seen == nil {
		c.seen = map[string]bool{}
	}
	if key := "interaction " + string(payload); !c.seen[key] {
		c.seen[key] = true
		c.bodies = append(c.bodies, Body{Name: name, Type: typ, JSON: payload})
	}
}

// InteractionType names an interaction payload ("interaction
// block_actions") and the @slack/bolt type it must be assignable to, or ""
// for a type brain does not take.
func InteractionType(payload []byte) (name, typ string) {
	var head struct {
		Type string `json:"type"`
	}
	_ = json.Unmarshal(payload, &head)
	switch head.Type {
	case "block_actions":
		return "interaction block_actions", "bolt.BlockAction"
	case "view_submission":
		// Slack sends the submitter's username (recorded in
		// testdata/slack-payloads), which bolt's type lacks.
		return "interaction view_submission", "bolt.ViewSubmitAction & { user: { username?: string } }"
	}
	return "", ""
}

// CheckMain runs a package's tests (from its TestMain), then type-checks
// the calls recorded against @slack/web-api's request types, failing the
// package on a body the types refuse. BRAIN_SKIP_NODE=1 skips the check.
func (c *SlackCalls) CheckMain(m *testing.M) int {
	code := m.Run()
	c.mu.Lock()
	bodies := c.bodies
	c.mu.Unlock()
	if code != 0 || os.Getenv("BRAIN_SKIP_NODE") == "1" || len(bodies) == 0 {
		return code
	}
	if err := checkSlack(bodies); err != nil {
		fmt.Fprintln(os.Stderr, "FAIL: the Web API bodies sent to the fake Slack, against @slack/web-api's request types:")
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

func checkSlack(bodies []Body) error {
	modules, err := Installed()
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "slack-contract")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	errs, err := TypeCheckIn(modules, dir, SlackImports, bodies)
	if err != nil {
		return err
	}
	var bad []string
	methods := map[string]int{}
	for i, e := range errs {
		methods[bodies[i].Name]++
		if e != "" {
			bad = append(bad, fmt.Sprintf("%s: %s\n  %s", bodies[i].Name, e, bodies[i].JSON))
		}
	}
	if len(bad) > 0 {
		return errors.New(strings.Join(bad, "\n"))
	}
	if testing.Verbose() {
		var names []string
		for m, n := range methods {
			names = append(names, fmt.Sprintf("%s (%d)", m, n))
		}
		sort.Strings(names)
		fmt.Printf("slack contract: %d distinct bodies of %d methods checked: %s\n", len(bodies), len(methods), strings.Join(names, ", "))
	}
	return nil
}
