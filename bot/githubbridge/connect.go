package githubbridge

import (
	"context"
	"fmt"

	ghc "brain/channels/github"
	"brain/engine"
)

// SendConnectLink replies in the conversation with the link that connects
// user's account to provider. Anyone may read the reply, so the link is
// brain's connections page (bot makes it), never the provider's: the page
// connects only the person signed in, and only if they are the person it
// names.
func (b *Bridge) SendConnectLink(ctx context.Context, s engine.Session, user, tool, provider, url string) error {
	t, err := ghc.Parse(s.ThreadKey)
	if err != nil {
		return fmt.Errorf("session %s has no GitHub conversation: %w", s.ID, err)
	}
	return b.say(ctx, t, fmt.Sprintf("@%s `%s` needs your own connection to %s; nothing was sent. "+
		"[Connect it in brain](%s) (you sign in as yourself; the link works for you alone), then mention me with `retry`.", user, tool, provider, url))
}

// SayConnected says in the conversation that user connected provider.
func (b *Bridge) SayConnected(ctx context.Context, s engine.Session, user, provider, _, tool string) error {
	t, err := ghc.Parse(s.ThreadKey)
	if err != nil {
		return fmt.Errorf("session %s has no GitHub conversation: %w", s.ID, err)
	}
	who := ""
	if user != "" {
		who = "@" + user + " "
	}
	return b.say(ctx, t, fmt.Sprintf("%sconnected %s. Mention @%s with `retry` to run the `%s` call that needed it again.", who, provider, b.cfg.Login, tool))
}

// LinkWhere says how SendConnectLink sends the link, for the model.
func (b *Bridge) LinkWhere() string {
	return "a reply in this conversation with a link to connect it in brain's console"
}
