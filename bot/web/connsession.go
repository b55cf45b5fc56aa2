package web

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"

	"brain/engine"
)

// A console (or API) session whose tool call needed a person's connection
// shows, in the call's span, a link to the connections page (the tool
// progress bot reports for it); once they connected, the provider sends
// them back to the session, which offers to run the call again.

// connectProgress is the tool progress that says a call needs a
// connection. Only the names are read from it: the link is built here, to
// this console's connections page, so a progress report from anything
// else cannot point elsewhere.
type connectProgress struct {
	Connect *struct {
		Provider string `json:"provider"`
		Person   string `json:"person"`
		Tool     string `json:"tool"`
	} `json:"brain_connect"`
}

// ConnectProgress is the progress bot reports on a call that needs
// person's connection to provider.
func ConnectProgress(provider, person, tool string) any {
	type c struct {
		Provider string `json:"provider"`
		Person   string `json:"person"`
		Tool     string `json:"tool"`
	}
	return map[string]c{"brain_connect": {provider, person, tool}}
}

// connectLinkOf reads a call's progress for the link to connect ("" none).
func connectLinkOf(p engine.ToolProgress, sessionID string) (provider, link string) {
	var cp connectProgress
	if json.Unmarshal(p.Data, &cp) != nil || cp.Connect == nil {
		return "", ""
	}
	c := cp.Connect
	if c.Provider == "" || c.Person == "" || !validParam(c.Provider) || !validParam(c.Person) || !validParam(c.Tool) {
		return "", ""
	}
	return c.Provider, ConnectLink("", c.Provider, c.Person, sessionID, p.CallID, c.Tool)
}

// connectedView is the notice a session shows once its person connected
// (the provider sent them back here).
type connectedView struct {
	Provider, Call, Tool string
}

func connectedOf(q url.Values, ss engine.Session) *connectedView {
	c := &connectedView{Provider: q.Get("connected"), Call: q.Get("call"), Tool: q.Get("tool")}
	if c.Provider == "" || !validParam(c.Provider) || !validParam(c.Call) || !validParam(c.Tool) {
		return nil
	}
	if ss.Origin != engine.OriginConsole && ss.Origin != engine.OriginAPI {
		c.Call, c.Tool = "", ""
	}
	return c
}

// RetryCallText is the message a retry after connecting sends the session
// (as Slack's Retry button does).
func RetryCallText(tool string) string {
	return fmt.Sprintf("retry: I connected my account. Run the `%s` call that needed it again, once, with the same arguments.", tool)
}

// retryCall sends a console or API session, once per call, the visitor's
// message asking for the call that needed their connection again.
func (s *Server) retryCall(w http.ResponseWriter, r *http.Request, v visitor) {
	ss, ok := s.session(w, r, v)
	if !ok {
		return
	}
	if ss.Origin != engine.OriginAPI && ss.Origin != engine.OriginConsole {
		s.fail(w, r, v, http.StatusConflict, "This session lives in "+string(ss.Origin)+": ask for the retry there.")
		return
	}
	call, tool := r.PostForm.Get("call"), r.PostForm.Get("tool")
	if call == "" || tool == "" || !validParam(call) || !validParam(tool) {
		s.fail(w, r, v, http.StatusBadRequest, "That is not a call brain can retry.")
		return
	}
	by, _ := v.identity()
	_, dup, err := s.cfg.Engine.Send(r.Context(), ss.ID, engine.Input{Text: RetryCallText(tool), Author: by,
		IdempotencyKey: "console-retry-call:" + ss.ID + ":" + call})
	if err != nil {
		s.engineError(w, r, v, err)
		return
	}
	notice := "Asked the agent to run " + tool + " again."
	if dup {
		notice = "This call was retried already."
	}
	http.Redirect(w, r, "/sessions/"+url.PathEscape(ss.ID)+"?"+url.Values{"notice": {notice}}.Encode(), http.StatusSeeOther)
}
