package bot

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"brain/channels/linear/linearfake"
	"brain/engine"
	"brain/engine/model/fakemodel"
	"brain/tools"
	"brain/webhooks/linearhook"
)

const (
	linearSecret = "linear-webhook-secret"
	linearToken  = "lin_oauth_test_token"
	linearUser   = "df3fc33e-32f3-4e65-bae7-6f8f36bdd55f"
)

type linearApp struct {
	*testApp
	linear  *linearfake.Server
	applied atomic.Int64
	seq     atomic.Int64
	// team is the teamId of the issue in the webhooks event sends ("" =
	// none, as in Linear's older payloads).
	team string
}

func newLinearApp(t *testing.T) *linearApp {
	t.Helper()
	return newLinearAppWith(t, "")
}

// newLinearAppWith adds top-level YAML (e.g. approvals) to the config.
func newLinearAppWith(t *testing.T, more string) *linearApp {
	t.Helper()
	return newLinearAppAgent(t, "", more)
}

// newLinearAppAgent adds agentMore to the agent's YAML block (e.g. a
// memory block) and more at the top level.
func newLinearAppAgent(t *testing.T, agentMore, more string) *linearApp {
	t.Helper()
	return newLinearAppTools(t, "ask, deploy", agentMore, "", more)
}

// newLinearAppTools is newLinearAppAgent with the agent's tools and more
// keys of the linear block (", key: value").
func newLinearAppTools(t *testing.T, toolList, agentMore, linearMore, more string) *linearApp {
	t.Helper()
	la := &linearApp{linear: linearfake.New(linearToken)}
	t.Cleanup(la.linear.Close)
	deploy := tools.Definition{
		Name: "deploy", Description: "Deploy",
		Input: json.RawMessage(`{"type":"object"}`),
		Preview: func(ctx context.Context, c tools.Call) (tools.Card, error) {
			return tools.Card{Title: "Deploy checkout", Facts: []tools.Fact{{Label: "Env", Value: "prod"}}}, nil
		},
		Apply: func(ctx context.Context, c tools.Call, d tools.Decision) (json.RawMessage, error) {
			la.applied.Add(1)
			return json.RawMessage(`{"ok":true}`), nil
		},
	}
	extra := agentMore + fmt.Sprintf("    tools: [%s]\nlinear: {webhook_secret: %s, access_token: %s, api_url: %s%s}\n", toolList, linearSecret, linearToken, la.linear.URL(), linearMore) + more
	la.testApp = newTestApp(t, extra, Options{Tools: []tools.Definition{deploy}})
	return la
}

// event posts a signed AgentSessionEvent for agent session sid.
func (la *linearApp) event(action, sid, body, signal string) int {
	la.t.Helper()
	n := la.seq.Add(1)
	ev := map[string]any{
		"type": "AgentSessionEvent", "action": action, "webhookTimestamp": time.Now().UnixMilli(),
		"agentSession": map[string]any{
			"id": sid, "creatorId": linearUser, "creator": map[string]any{"id": linearUser, "name": "Ann"},
			"comment": map[string]any{"id": "c-1", "body": body, "userId": linearUser},
			"issue":   map[string]any{"id": "i-1", "identifier": "ENG-1", "title": "Fix checkout", "url": "https://linear.app/x/issue/ENG-1"},
		},
	}
	if la.team != "" {
		ev["agentSession"].(map[string]any)["issue"].(map[string]any)["teamId"] = la.team
	}
	if action == "created" {
		ev["promptContext"] = "<issue identifier=\"ENG-1\"><title>Fix checkout</title></issue>\n" + body
	} else {
		act := map[string]any{"id": fmt.Sprintf("a1b2c3d4-0000-4000-8000-%012d", n), "agentSessionId": sid, "userId": linearUser,
			"content": map[string]any{"type": "prompt", "body": body}}
		if signal != "" {
			act["signal"] = signal
		}
		ev["agentActivity"] = act
	}
	raw, _ := json.Marshal(ev)
	req, _ := http.NewRequest("POST", la.base+"/linear/webhook", bytes.NewReader(raw))
	req.Header.Set(linearhook.HeaderSignature, linearhook.Signature(linearSecret, raw))
	req.Header.Set(linearhook.HeaderDelivery, fmt.Sprintf("d0e1f2a3-0000-4000-8000-%012d", n))
	req.Header.Set(linearhook.HeaderEvent, "AgentSessionEvent")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		la.t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// waitActivity waits for an activity of type typ whose body contains want.
func (la *linearApp) waitActivity(sid, typ, want string) linearfake.Activity {
	la.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		for _, a := range la.linear.Activities(sid) {
			if a.Type == typ && strings.Contains(a.Body+a.Result, want) {
				return a
			}
		}
		if time.Now().After(deadline) {
			la.t.Fatalf("no %s activity with %q in %+v", typ, want, la.linear.Activities(sid))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

const sidA = "5c2a2e8e-6d3a-4e0b-9a43-0d7a1c5b8f11"

func TestLinear_CreatedGetsThoughtActionsAndResponse(t *testing.T) {
	la := newLinearApp(t)
	la.fake.Push(
		fakemodel.TextAndTools("Let me check.", fakemodel.Call{Name: "ask", Input: `{"text":"Which env?","options":[{"label":"Staging","value":"stg"},{"label":"Production","value":"prod"}]}`}),
		fakemodel.Text("Staging it is."),
	)
	if st := la.event("created", sidA, "@brain fix the checkout", ""); st != 200 {
		t.Fatalf("status %d", st)
	}
	la.waitActivity(sidA, "thought", "Looking into it")
	el := la.waitActivity(sidA, "elicitation", "Which env?")
	if el.Signal != "select" || !strings.Contains(string(el.SignalMetadata), `"value":"stg"`) {
		t.Fatalf("elicitation %+v", el)
	}
	la.waitActivity(sidA, "thought", "Let me check.")
	// The select choice comes back as a prompt whose body is the value.
	la.event("prompted", sidA, "stg", "")
	la.waitActivity(sidA, "response", "Staging it is.")
	s, err := la.app.store.SessionByThread(context.Background(), "linear:"+sidA)
	if err != nil || s.Origin != engine.OriginLinear || s.StartedBy != linearUser {
		t.Fatalf("session %v %+v", err, s)
	}
	if !strings.Contains(string(la.fake.Requests()[0].Raw), "Fix checkout") {
		t.Fatal("the issue context did not reach the model")
	}
	for _, r := range la.linear.Requests() {
		if r.Authorization != "Bearer "+linearToken {
			t.Fatalf("authorization %q", r.Authorization)
		}
	}
}

func TestLinear_ApprovalByElicitation(t *testing.T) {
	la := newLinearApp(t)
	la.fake.Push(fakemodel.ToolCalls(fakemodel.Call{Name: "deploy"}), fakemodel.Text("Proposed the deploy."))
	la.event("created", sidA, "@brain deploy", "")
	el := la.waitActivity(sidA, "elicitation", "Deploy checkout")
	var meta struct {
		Options []struct{ Value, Label string }
	}
	_ = json.Unmarshal(el.SignalMetadata, &meta)
	if len(meta.Options) != 2 {
		t.Fatalf("options %s", el.SignalMetadata)
	}
	la.waitActivity(sidA, "action", "Recorded for approval")
	la.event("prompted", sidA, meta.Options[0].Value, "") // approve
	la.waitActivity(sidA, "thought", "applied")
	if la.applied.Load() != 1 {
		t.Fatalf("applied %d", la.applied.Load())
	}
	la.event("prompted", sidA, meta.Options[0].Value, "") // a second pick
	la.waitActivity(sidA, "thought", "already approved")
	if la.applied.Load() != 1 {
		t.Fatal("applied twice")
	}
}

func TestLinear_StopCancelsTheTurn(t *testing.T) {
	la := newLinearApp(t)
	la.fake.Push(fakemodel.Hold())
	la.event("created", sidA, "@brain long job", "")
	if _, err := la.fake.WaitRequests(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	la.event("prompted", sidA, "", "stop")
	la.waitActivity(sidA, "response", "Stopped.")
	s, _ := la.app.store.SessionByThread(context.Background(), "linear:"+sidA)
	_, evs := la.waitTurns(s.ID, 1)
	for _, ev := range evs {
		if ev.Type == engine.EventTurnCompleted && !strings.Contains(string(ev.Data), "cancelled") {
			t.Fatalf("turn %s", ev.Data)
		}
	}
}

func TestLinear_PromptedBeforeCreatedAndForgedWebhooks(t *testing.T) {
	la := newLinearApp(t)
	la.fake.Push(fakemodel.Text("On the follow-up."), fakemodel.Text("On the original."))
	la.event("prompted", sidA, "also handle refunds", "")
	la.event("created", sidA, "@brain fix checkout", "")
	la.waitActivity(sidA, "response", "On the original.")
	sessions, _ := la.app.engine.Sessions(context.Background(), engine.SessionFilter{})
	if len(sessions) != 1 {
		t.Fatalf("%d sessions for one Linear session", len(sessions))
	}
	raw := []byte(`{"type":"AgentSessionEvent","action":"created","webhookTimestamp":` + fmt.Sprint(time.Now().UnixMilli()) + `}`)
	req, _ := http.NewRequest("POST", la.base+"/linear/webhook", bytes.NewReader(raw))
	req.Header.Set(linearhook.HeaderSignature, linearhook.Signature("wrong-secret", raw))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 401 {
		t.Fatalf("forged: %d", resp.StatusCode)
	}
}

// TestLinear_RunAgainAfterAFailure: a failed turn's error is followed by a
// "Run again" choice; picking it resumes with retry, so the unanswered
// prompt runs again and is answered. A choice naming another session runs
// nothing.
func TestLinear_RunAgainAfterAFailure(t *testing.T) {
	la := newLinearApp(t)
	la.fake.Push(fakemodel.Fail(503, "overloaded"))
	la.event("created", sidA, "summarise ENG-1", "")
	la.waitActivity(sidA, "error", "provider_unavailable")
	choice := la.waitActivity(sidA, "elicitation", "Run the unanswered messages again?")
	var meta struct {
		Options []struct{ Value, Label string }
	}
	if err := json.Unmarshal(choice.SignalMetadata, &meta); err != nil || choice.Signal != "select" || len(meta.Options) != 1 || meta.Options[0].Label != "Run again" {
		t.Fatalf("signal %q metadata %s (%v)", choice.Signal, choice.SignalMetadata, err)
	}
	s, err := la.app.store.SessionByThread(context.Background(), "linear:"+sidA)
	if err != nil {
		t.Fatal(err)
	}

	la.event("prompted", sidA, "retry:ses_someone_else", "")
	la.waitActivity(sidA, "thought", "belongs to another session")

	la.fake.Push(fakemodel.Text("ENG-1 is about checkout."))
	la.event("prompted", sidA, meta.Options[0].Value, "")
	la.waitActivity(sidA, "thought", "Running 1 unanswered message(s) again.")
	la.waitActivity(sidA, "response", "ENG-1 is about checkout.")
	// The reply is delivered as soon as it is recorded; the turn's end
	// follows it.
	deadline := time.Now().Add(20 * time.Second)
	for {
		got, _ := la.app.engine.Session(context.Background(), s.ID)
		if got.Status == engine.StatusIdle {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("status %s, want idle after the retried turn", got.Status)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
