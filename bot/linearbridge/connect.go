package linearbridge

import (
	"context"
	"fmt"

	"brain/channels/linear"
	"brain/engine"
)

// SendConnectLink asks user, in the agent session, to connect their
// account to provider: an elicitation with Linear's auth signal whose url
// is brain's connections page (bot makes it). Others may read the
// session, so the link starts nothing by itself: the page connects only
// the person signed in, and only if they are the person it names.
func (b *Bridge) SendConnectLink(ctx context.Context, s engine.Session, user, tool, provider, url string) error {
	t, client, err := b.agentSession(ctx, s)
	if err != nil {
		return err
	}
	body := fmt.Sprintf("`%s` needs your own connection to %s; nothing was sent. Connect it in brain (you sign in as yourself), then reply `retry`.", tool, provider)
	return client.AuthElicitation(ctx, t.Session, linear.ActivityID(t.Session, "connect", url), body, url, user, provider)
}

// SayConnected says in the agent session that user connected provider:
// a thought (Linear's signal to resume), with how to retry the call.
func (b *Bridge) SayConnected(ctx context.Context, s engine.Session, user, provider, callID, tool string) error {
	t, client, err := b.agentSession(ctx, s)
	if err != nil {
		return err
	}
	body := fmt.Sprintf("Connected %s. Reply `retry` to run the `%s` call that needed it again.", provider, tool)
	return client.Thought(ctx, t.Session, linear.ActivityID(t.Session, "connected", provider, callID), body, false)
}

// agentSession is the Linear agent session s lives in and the client
// that posts to it.
func (b *Bridge) agentSession(ctx context.Context, s engine.Session) (linear.Thread, *linear.Client, error) {
	t, ok := linear.ParseThread(s.ThreadKey)
	if !ok {
		return linear.Thread{}, nil, fmt.Errorf("session %s has no Linear agent session", s.ID)
	}
	client, err := b.sessionClient(ctx, t.Session)
	return t, client, err
}

// LinkWhere says how SendConnectLink sends the link, for the model.
func (b *Bridge) LinkWhere() string {
	return "a link in this Linear session to connect it in brain's console"
}
