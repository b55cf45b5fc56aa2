package api

import (
	"net/http"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"brain/engine"
)

// apiDoc is one operation of the OpenAPI document: the route pattern as
// the mux has it, what it does, and the schemas of its body and answer
// (names under components.schemas; "" = none).
type apiDoc struct {
	pattern  string // "METHOD /path/{param}"
	summary  string
	query    []string // query parameters
	request  string
	response string
	status   int // success status (200 when 0)
	// stream are the schemas of the data of the server-sent events the
	// operation streams with Accept: text/event-stream (none when empty).
	stream []string
}

// apiDocs is every /v1 route. TestOpenAPI_MatchesTheRoutes keeps it and
// routes() in step.
var apiDocs = []apiDoc{
	{pattern: "POST /v1/sessions", summary: "Create a session (optionally with its first message)", request: "CreateSession", response: "SessionWithEvent", status: 201},
	{pattern: "GET /v1/sessions", summary: "List sessions, newest first", query: []string{"status", "limit"}, response: "SessionList"},
	{pattern: "GET /v1/sessions/{id}", summary: "Get a session, with the tokens its model calls used (usage)", response: "SessionWithUsage"},
	{pattern: "GET /v1/sessions/{id}/events", summary: "List a session's events after a sequence number (Accept: text/event-stream streams them; with deltas=true the stream also carries agent.message.delta events, the text as the model writes it: no id, not retained, not replayed)", query: []string{"after", "limit", "deltas"}, response: "EventList", stream: []string{"Event", "AgentMessageDelta"}},
	{pattern: "POST /v1/sessions/{id}/events", summary: "Send a user.message (or an answer) to a session", request: "UserMessage", response: "Event", status: 202},
	{pattern: "POST /v1/sessions/{id}/resume", summary: "Resume an interrupted or failed session at its checkpoint", response: "Session"},
	{pattern: "POST /v1/sessions/{id}/cancel", summary: "Cancel the running turn and close the open question", response: "Session"},
	{pattern: "POST /v1/sessions/{id}/compact", summary: "Compact the session's context now: shorten large old tool results and summarise older turns (409 while a turn runs)", response: "Compaction"},
	{pattern: "GET /v1/sessions/{id}/results", summary: "Every result the session committed", response: "ResultList"},
	{pattern: "GET /v1/approvals", summary: "List approvals", query: []string{"status", "session_id", "limit"}, response: "ApprovalList"},
	{pattern: "GET /v1/approvals/{id}", summary: "Get an approval", response: "Approval"},
	{pattern: "POST /v1/approvals/{id}/decision", summary: "Approve or deny (the first decision wins)", request: "Decision", response: "Approval"},
	{pattern: "POST /v1/approvals/{id}/retry", summary: "Retry the apply of an unconfirmed or failed approval", request: "Retry", response: "Approval"},
	{pattern: "GET /v1/budgets", summary: "List the budget limits admins set", response: "BudgetList"},
	{pattern: "PUT /v1/budgets", summary: "Set one budget's limit (an admin's change, with a reason, recorded in the audit trail)", request: "Budget", response: "Budget"},
	{pattern: "GET /v1/schedules", summary: "List schedules with their next fire time and last runs", response: "ScheduleList"},
	{pattern: "POST /v1/schedules/{name}/run", summary: "Run a schedule now", response: "ScheduleRun", status: 202},
	{pattern: "GET /v1/people", summary: "List people with the identities linked to them", response: "PersonList"},
	{pattern: "POST /v1/people", summary: "Create a person or rename one", request: "SavePerson", response: "Person"},
	{pattern: "POST /v1/people/{id}/identities", summary: "Link an identity (surface and id) to a person, moving it from anyone else", request: "Identity", response: "Person"},
	{pattern: "DELETE /v1/people/{id}", summary: "Erase a person: their messages become a marker, their files, memory, connections and identities go; recorded in the audit trail", status: 204},
	{pattern: "POST /v1/people/{id}/erase", summary: "Erase a person as DELETE does, answering what was removed (brain people erase)", response: "PersonErased"},
	{pattern: "GET /v1/connections", summary: "List connections (a person's with person=ID; person= is the workspace's): existence, scope, expiry, never tokens", query: []string{"person"}, response: "ConnectionList"},
	{pattern: "POST /v1/connections/connect", summary: "Start connecting an account: returns the URL to open (a person's with person, else the workspace's)", request: "ConnectRequest", response: "ConnectLink"},
	{pattern: "POST /v1/connections/{id}/revoke", summary: "Revoke a connection: its tokens are forgotten", request: "Retry", response: "Connection"},
	{pattern: "POST /v1/connections/{id}/service-account", summary: "Mark (or unmark) a person's connection as its provider's service account, the one person's connection schedules may use; recorded in the audit trail", request: "ServiceAccount", response: "Connection"},
	{pattern: "GET /v1/memory", summary: "List the memory scopes that hold files, with their totals", response: "MemoryScopeList"},
	{pattern: "GET /v1/memory/files", summary: "List a memory scope's files (content=true exports their content too)", query: []string{"scope", "content"}, response: "MemoryFileList"},
	{pattern: "GET /v1/memory/file", summary: "Get a memory file with its history (who changed what, from which session), newest first", query: []string{"scope", "path"}, response: "MemoryFileWithHistory"},
	{pattern: "PUT /v1/memory/file", summary: "Edit (or create, with version 0) a memory file as an operator; 409 when it changed since version", query: []string{"scope", "path"}, request: "MemoryEdit", response: "MemoryFile"},
	{pattern: "DELETE /v1/memory/file", summary: "Delete a memory file as an operator; 409 when it changed since version", query: []string{"scope", "path", "version", "by"}, status: 204},
	{pattern: "GET /v1/openapi.json", summary: "This document", response: "Object"},
}

// apiSchemas are the document's schemas, loose where the engine's types
// grow: objects name their main properties and allow more.
var apiSchemas = map[string]any{
	"Object": map[string]any{"type": "object"},
	"Error": obj(map[string]any{
		"error":      obj(map[string]any{"code": str(), "message": str()}, "code", "message"),
		"request_id": str(),
	}, "error", "request_id"),
	"CreateSession": obj(map[string]any{"agent": str(), "interactive": boolean(), "started_by": str(), "message": str()}),
	"Session": obj(map[string]any{
		"id": str(), "agent": str(), "origin": str(), "status": enum("idle", "running", "awaiting_input", "interrupted", "failed"),
		"interactive": boolean(), "started_by": str(), "started_key": str(), "last_seq": integer(), "checkpoint": integer(),
		"created_at": datetime(), "updated_at": datetime(), "question": ref("Object"), "result": ref("Object"),
	}, "id", "agent", "origin", "status"),
	"SessionWithEvent": map[string]any{"allOf": []any{ref("Session"), obj(map[string]any{"event": ref("Event")})}},
	"SessionList":      obj(map[string]any{"sessions": list("Session")}, "sessions"),
	"SessionWithUsage": map[string]any{"allOf": []any{ref("Session"), obj(map[string]any{"usage": ref("Usage")}, "usage")}},
	"Usage": obj(map[string]any{
		"input_tokens": integer(), "uncached_input_tokens": integer(), "cache_read_input_tokens": integer(),
		"cache_creation_input_tokens": integer(), "output_tokens": integer(), "cost_usd": map[string]any{"type": "number"},
	}, "input_tokens", "uncached_input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens", "output_tokens"),
	"Compaction": obj(map[string]any{
		"reason": enum("budget", "provider", "requested"), "summary": str(), "from_seq": integer(), "to_seq": integer(),
		"kept": map[string]any{"type": "array", "items": str()}, "shortened": map[string]any{"type": "array", "items": integer()},
		"tokens_before": integer(), "tokens_after": integer(), "usage": ref("Object"),
	}, "reason", "tokens_before", "tokens_after"),
	"Event": obj(map[string]any{
		"id": str(), "seq": integer(), "type": str(), "turn_id": str(), "created_at": datetime(), "data": ref("Object"),
	}, "id", "seq", "type", "data"),
	"EventList": obj(map[string]any{"events": list("Event")}, "events"),
	// The data of an agent.message.delta server-sent event (SSE only).
	"AgentMessageDelta": obj(map[string]any{"session_id": str(), "turn_id": str(), "round": integer(), "text": str()}, "session_id", "turn_id", "round", "text"),
	"UserMessage": obj(map[string]any{
		"type": enum("user.message"), "text": str(), "author": str(), "mode": enum("queue", "interrupt"),
		"idempotency_key": str(),
		"answer":          obj(map[string]any{"question_id": str(), "value": str(), "text": str()}, "question_id"),
	}, "type"),
	"ResultList": obj(map[string]any{"results": list("Object")}, "results"),
	"Approval": obj(map[string]any{
		"id": str(), "session_id": str(), "tool": str(), "status": enum("pending", "approved", "denied", "expired", "applying", "applied", "failed", "unconfirmed"),
		"card": ref("Object"), "input": ref("Object"), "requested_by": str(), "decided_by": str(),
		"created_at": datetime(), "expires_at": datetime(),
		"comment": str(), "policy": str(), "required": integer(), "forbid_self": boolean(),
		"votes": map[string]any{"type": "array", "items": ref("Vote")}, "reminded_at": datetime(),
	}, "id", "session_id", "tool", "status"),
	"Vote":         obj(map[string]any{"by": str(), "at": datetime(), "comment": str()}, "by", "at"),
	"ApprovalList": obj(map[string]any{"approvals": list("Approval")}, "approvals"),
	"Decision": obj(map[string]any{
		"decision": enum("approve", "deny"), "by": str(),
		"comment": map[string]any{"type": "string", "maxLength": engine.MaxComment, "description": "the approver's comment (approve) or the reason (deny); the agent sees it"},
	}, "decision"),
	"Retry": obj(map[string]any{"by": str()}),
	"Budget": obj(map[string]any{"scope": enum("person", "channel", "agent", "schedule"), "subject": str(), "period": enum("day", "month"),
		"tokens": integer(), "cost": map[string]any{"type": "number"}, "reason": str(), "set_by": str(), "set_at": str()}, "scope", "period", "reason"),
	"BudgetList":   obj(map[string]any{"budgets": list("Budget")}, "budgets"),
	"ScheduleList": obj(map[string]any{"schedules": list("Object")}, "schedules"),
	"ScheduleRun":  ref("Object"),
	"Identity":     obj(map[string]any{"surface": str(), "external_id": str()}, "surface", "external_id"),
	"SavePerson":   obj(map[string]any{"id": str(), "name": str()}, "id"),
	"Person":       obj(map[string]any{"id": str(), "name": str(), "identities": list("Identity")}, "id", "name", "identities"),
	"PersonList":   obj(map[string]any{"people": list("Person")}, "people"),
	"PersonErased": obj(map[string]any{"person": str(), "identities": integer(), "sessions": integer(), "messages": integer(),
		"files": integer(), "memory_files": integer()}, "person", "identities", "sessions", "messages", "files", "memory_files"),
	"Connection": obj(map[string]any{
		"id": str(), "person_id": str(), "provider": str(), "account": str(), "scope": str(), "expires_at": datetime(),
		"status": enum("connected", "revoked"), "problem": str(), "service_account": boolean(), "updated_at": datetime(),
	}, "id", "person_id", "provider", "status"),
	"ConnectionList": obj(map[string]any{"connections": list("Connection")}, "connections"),
	"ServiceAccount": obj(map[string]any{"enabled": boolean()}, "enabled"),
	"ConnectRequest": obj(map[string]any{"provider": str(), "person": str()}, "provider"),
	"ConnectLink":    obj(map[string]any{"url": str(), "expires_in": map[string]any{"type": "integer"}}, "url"),
	"MemoryScopeList": obj(map[string]any{"scopes": map[string]any{"type": "array", "items": obj(map[string]any{
		"scope": str(), "files": integer(), "bytes": integer()}, "scope", "files", "bytes")}}, "scopes"),
	"MemoryFile": obj(map[string]any{
		"scope": str(), "path": str(), "size": integer(), "version": integer(), "updated_at": datetime(),
		"updated_by": str(), "session_id": str(), "content": str(),
	}, "scope", "path", "size", "version", "updated_at"),
	"MemoryFileList": obj(map[string]any{"scope": str(), "files": list("MemoryFile")}, "scope", "files"),
	"MemoryChange": obj(map[string]any{
		"path": str(), "op": str(), "version": integer(), "diff": str(), "by": str(), "session_id": str(), "at": datetime(),
	}, "path", "op", "version", "at"),
	"MemoryFileWithHistory": obj(map[string]any{"file": ref("MemoryFile"), "history": list("MemoryChange")}, "file", "history"),
	"MemoryEdit":            obj(map[string]any{"content": str(), "version": integer(), "by": str()}, "content", "version"),
}

func str() map[string]any      { return map[string]any{"type": "string"} }
func integer() map[string]any  { return map[string]any{"type": "integer"} }
func boolean() map[string]any  { return map[string]any{"type": "boolean"} }
func datetime() map[string]any { return map[string]any{"type": "string", "format": "date-time"} }
func ref(name string) map[string]any {
	return map[string]any{"$ref": "#/components/schemas/" + name}
}
func list(item string) map[string]any { return map[string]any{"type": "array", "items": ref(item)} }
func enum(values ...string) map[string]any {
	return map[string]any{"type": "string", "enum": values}
}
func obj(props map[string]any, required ...string) map[string]any {
	o := map[string]any{"type": "object", "properties": props}
	if len(required) > 0 {
		o["required"] = required
	}
	return o
}

var pathParam = regexp.MustCompile(`\{([a-z_]+)\}`)

// openAPIDocument builds the OpenAPI 3.1 document of /v1.
func openAPIDocument() map[string]any {
	paths := map[string]map[string]any{}
	errResp := map[string]any{"description": "the error envelope", "content": map[string]any{"application/json": map[string]any{"schema": ref("Error")}}}
	for _, d := range apiDocs {
		method, path, _ := strings.Cut(d.pattern, " ")
		op := map[string]any{"summary": d.summary, "operationId": operationID(method, path)}
		var params []any
		for _, m := range pathParam.FindAllStringSubmatch(path, -1) {
			params = append(params, map[string]any{"name": m[1], "in": "path", "required": true, "schema": str()})
		}
		for _, q := range d.query {
			params = append(params, map[string]any{"name": q, "in": "query", "schema": str()})
		}
		if len(params) > 0 {
			op["parameters"] = params
		}
		if d.request != "" {
			op["requestBody"] = map[string]any{"required": true, "content": map[string]any{"application/json": map[string]any{"schema": ref(d.request)}}}
		}
		status := d.status
		if status == 0 {
			status = http.StatusOK
		}
		ok := map[string]any{"description": http.StatusText(status)}
		if d.response != "" {
			ok["content"] = map[string]any{"application/json": map[string]any{"schema": ref(d.response)}}
		}
		if len(d.stream) > 0 {
			var data []any
			for _, name := range d.stream {
				data = append(data, ref(name))
			}
			ok["content"].(map[string]any)["text/event-stream"] = map[string]any{
				"schema": map[string]any{"description": "the data of each server-sent event", "oneOf": data}}
		}
		responses := map[string]any{strconv.Itoa(status): ok, "default": errResp}
		for _, code := range errorCodes(d) {
			responses[strconv.Itoa(httpStatus[code])] = map[string]any{"$ref": "#/components/responses/" + code}
		}
		op["responses"] = responses
		if paths[path] == nil {
			paths[path] = map[string]any{}
		}
		paths[path][strings.ToLower(method)] = op
	}
	return map[string]any{
		"openapi": "3.1.0",
		"info": map[string]any{
			"title":   "brain API",
			"version": "1",
			"license": map[string]any{"name": "Apache-2.0", "identifier": "Apache-2.0"},
			"description": "Sessions, events, approvals and schedules of a brain daemon. Every answer carries X-Request-ID; " +
				"every failure is the error envelope. Bearer keys from api_keys are required unless brain listens on loopback with none.",
		},
		"servers":  []any{map[string]any{"url": "/"}},
		"security": []any{map[string]any{"bearer": []any{}}},
		"paths":    paths,
		"components": map[string]any{"schemas": apiSchemas, "responses": errorResponses(),
			"securitySchemes": map[string]any{"bearer": map[string]any{"type": "http", "scheme": "bearer"}}},
	}
}

// errorCodes are the error codes an operation can answer with: any the
// engine or the key check returns, and an idempotency mismatch where a
// message carries a key. A method the path does not have (405) is not an
// answer of the path's operations.
func errorCodes(d apiDoc) []string {
	var out []string
	for code := range httpStatus {
		if code == engine.CodeMethodNotAllowed || code == codeIdempotencyMismatch && d.request != "UserMessage" {
			continue
		}
		out = append(out, code)
	}
	sort.Strings(out)
	return out
}

// errorResponses are components.responses: the error envelope under each
// status of httpStatus an operation can answer with, named by its code.
func errorResponses() map[string]any {
	out := map[string]any{}
	for code, status := range httpStatus {
		if code == engine.CodeMethodNotAllowed {
			continue
		}
		out[code] = map[string]any{
			"description": http.StatusText(status) + ": the error envelope with code " + code,
			"content":     map[string]any{"application/json": map[string]any{"schema": ref("Error")}},
		}
	}
	return out
}

// operationID is e.g. post_v1_sessions_id_events.
func operationID(method, path string) string {
	return strings.ToLower(method) + strings.NewReplacer("/", "_", "{", "", "}", "", ".", "_").Replace(path)
}

func (a *Server) openAPI(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, openAPIDocument())
}
