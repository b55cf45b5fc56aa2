package linearfake

import (
	"encoding/json"
	"net/http"
	"strings"
)

// Content types an agent may create; "prompt" is the person's own.
var agentContentTypes = []string{"thought", "action", "elicitation", "response", "error"}

// parseActivity validates an AgentActivityCreateInput the way Linear's
// guide says Linear does ("validated server-side, and invalid shapes will
// be rejected"): required fields per content type, ephemeral only on
// thought and action, signals only where they apply, client ids in UUID v4
// format.
func parseActivity(raw json.RawMessage) (Activity, *gqlError) {
	in, err := decodeObject(raw, "AgentActivityCreateInput", "agentSessionId", "content", "ephemeral", "id", "signal", "signalMetadata")
	if err != nil {
		return Activity{}, err
	}
	a := Activity{Input: compact(raw)}
	var ok bool
	if a.SessionID, ok, err = str(in, "agentSessionId"); err != nil || !ok || a.SessionID == "" {
		return Activity{}, orInvalid(err, "agentSessionId is required")
	}
	if a.ClientID, _, err = str(in, "id"); err != nil {
		return Activity{}, err
	}
	if a.ClientID != "" && !uuidV4.MatchString(a.ClientID) {
		return Activity{}, invalid("id must be a UUID v4, got %q", a.ClientID)
	}
	if err := parseContent(in["content"], &a); err != nil {
		return Activity{}, err
	}
	if raw, present := in["ephemeral"]; present {
		e, berr := boolean(raw)
		if berr != nil {
			return Activity{}, invalid("ephemeral must be a boolean")
		}
		if e && a.Type != "thought" && a.Type != "action" {
			return Activity{}, invalid("only thought and action activities can be ephemeral, not %s", a.Type)
		}
		a.Ephemeral = e
	}
	if a.Signal, _, err = str(in, "signal"); err != nil {
		return Activity{}, err
	}
	if md, present := in["signalMetadata"]; present && string(md) != "null" {
		a.SignalMetadata = compact(md)
	}
	if err := checkSignal(a); err != nil {
		return Activity{}, err
	}
	return a, nil
}

// parseContent fills the activity's content fields.
func parseContent(raw json.RawMessage, a *Activity) *gqlError {
	if len(raw) == 0 || string(raw) == "null" {
		return invalid("content is required")
	}
	var head struct {
		Type string `json:"type"`
	}
	if json.Unmarshal(raw, &head) != nil {
		return invalid("content must be an object with a type")
	}
	a.Type = head.Type
	switch {
	case head.Type == "prompt":
		return invalid("an agent cannot create prompt activities")
	case !contains(agentContentTypes, head.Type):
		return invalid("content.type must be one of %s, got %q", strings.Join(agentContentTypes, ", "), head.Type)
	case head.Type == "action":
		c, err := decodeObject(raw, "action content", "type", "action", "parameter", "result")
		if err != nil {
			return err
		}
		var ok bool
		if a.Action, ok, err = str(c, "action"); err != nil || !ok || a.Action == "" {
			return orInvalid(err, "content.action is required")
		}
		if a.Parameter, ok, err = str(c, "parameter"); err != nil || !ok {
			return orInvalid(err, "content.parameter is required (a string, \"\" allowed)")
		}
		if a.Result, a.HasResult, err = str(c, "result"); err != nil {
			return err
		}
	default:
		c, err := decodeObject(raw, head.Type+" content", "type", "body")
		if err != nil {
			return err
		}
		var ok bool
		if a.Body, ok, err = str(c, "body"); err != nil || !ok || strings.TrimSpace(a.Body) == "" {
			return orInvalid(err, "content.body is required for %s", head.Type)
		}
	}
	return nil
}

// checkSignal enforces where each signal applies (Linear's signals guide):
// stop is sent by people only; auth and select go on elicitations, select
// with options [{value, label?}] and auth with a url.
func checkSignal(a Activity) *gqlError {
	switch a.Signal {
	case "":
		if a.SignalMetadata != nil {
			return invalid("signalMetadata without a signal")
		}
		return nil
	case "continue":
		return nil
	case "stop":
		return invalid("the stop signal is only for prompts from people")
	case "auth", "select":
		if a.Type != "elicitation" {
			return invalid("the %s signal applies to elicitation activities, not %s", a.Signal, a.Type)
		}
	default:
		return &gqlError{http.StatusBadRequest, codeParse, "Value " + quoteJSON(a.Signal) + " does not exist in \"AgentActivitySignal\" enum."}
	}
	if a.Signal == "auth" {
		var md struct {
			URL string `json:"url"`
		}
		if a.SignalMetadata == nil || json.Unmarshal(a.SignalMetadata, &md) != nil || md.URL == "" {
			return invalid("the auth signal needs signalMetadata.url")
		}
		return nil
	}
	var md struct {
		Options []struct {
			Value *string `json:"value"`
			Label *string `json:"label"`
		} `json:"options"`
	}
	if a.SignalMetadata == nil || json.Unmarshal(a.SignalMetadata, &md) != nil || len(md.Options) == 0 {
		return invalid("the select signal needs signalMetadata.options")
	}
	for i, o := range md.Options {
		if o.Value == nil || *o.Value == "" {
			return invalid("signalMetadata.options[%d].value is required", i)
		}
	}
	return nil
}

// checkSessionUpdate accepts AgentSessionUpdateInput's fields.
func checkSessionUpdate(raw json.RawMessage) *gqlError {
	in, err := decodeObject(raw, "AgentSessionUpdateInput",
		"externalLink", "externalUrls", "addedExternalUrls", "removedExternalUrls", "plan", "dismissedAt", "userState")
	if err != nil {
		return err
	}
	if plan, ok := in["plan"]; ok && string(plan) != "null" {
		return checkPlan(plan)
	}
	return nil
}

// planStatuses are the statuses of a plan step (Linear's agent plans).
var planStatuses = []string{"pending", "inProgress", "completed", "canceled"}

// checkPlan accepts a plan: a list of steps {content, status}.
func checkPlan(raw json.RawMessage) *gqlError {
	var steps []map[string]json.RawMessage
	if json.Unmarshal(raw, &steps) != nil {
		return invalid("plan must be a list of steps {content, status}")
	}
	for i, st := range steps {
		for k := range st {
			if k != "content" && k != "status" {
				return invalid("plan[%d] has an unknown field %q", i, k)
			}
		}
		content, ok, err := str(st, "content")
		if err != nil || !ok || strings.TrimSpace(content) == "" {
			return orInvalid(err, "plan[%d].content is required", i)
		}
		status, _, err := str(st, "status")
		if err != nil || !contains(planStatuses, status) {
			return orInvalid(err, "plan[%d].status must be one of %s", i, strings.Join(planStatuses, ", "))
		}
	}
	return nil
}

func orInvalid(err *gqlError, format string, args ...any) *gqlError {
	if err != nil {
		return err
	}
	return invalid(format, args...)
}

func quoteJSON(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
