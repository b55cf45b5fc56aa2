package githubbridge

import (
	"brain/tools"

	"context"
	"fmt"
	"strings"

	"brain/bot/bridge"
	ghc "brain/channels/github"
	"brain/engine"
	"brain/webhooks/githubhook"
)

// command works a slash command in a conversation with a session:
// /approve, /deny, /retry decide through the engine (which checks the
// decider against approvers, policies, N approvers and forbid_self);
// /stop cancels the turn. A refusal is answered as a comment.
func (b *Bridge) command(ctx context.Context, t ghc.Thread, it githubhook.Item, s engine.Session, cmd ghc.Command) error {
	if cmd.Verb == "stop" {
		if ok, err := b.mayStop(ctx, it, s); err != nil || !ok {
			if err != nil {
				return err
			}
			return b.say(ctx, t, fmt.Sprintf("@%s only the person who started this session or someone who may use brain here can stop it.", it.Author))
		}
		if _, err := b.eng.Cancel(ctx, s.ID); err != nil {
			if text, refused := bridge.Refusal(err); refused {
				return b.say(ctx, t, text)
			}
			return err
		}
		return b.react(ctx, t, it, "+1")
	}
	if b.cfg.ApproversNeedWrite {
		ok, err := b.client.CanWrite(ctx, it.Owner, it.Repo, it.Author)
		if err != nil {
			return err
		}
		if !ok {
			return b.say(ctx, t, fmt.Sprintf("@%s deciding approvals here needs write access to %s.", it.Author, it.Repository()))
		}
	}
	statuses := []engine.ApprovalStatus{engine.ApprovalPending}
	if cmd.Verb == "retry" {
		statuses = []engine.ApprovalStatus{engine.ApprovalFailed, engine.ApprovalUnconfirmed}
	}
	id, msg, err := b.pick(ctx, s.ID, statuses, cmd)
	if err != nil {
		return err
	}
	if msg != "" {
		return b.say(ctx, t, msg)
	}
	d := engine.Decision{Approve: cmd.Verb != "deny", By: it.Author, Surface: engine.SurfaceGitHub, Comment: cmd.Text}
	if cmd.Verb == "retry" {
		_, err = b.eng.Retry(ctx, id, d)
	} else {
		_, err = b.eng.Decide(ctx, id, d)
	}
	if text, refused := bridge.Refusal(err); refused {
		return b.say(ctx, t, "@"+it.Author+" "+text)
	}
	if err != nil {
		return err
	}
	return b.react(ctx, t, it, "+1")
}

// pick finds the approval a command names, or the session's only one in
// statuses; msg explains when there is none, several or no match.
func (b *Bridge) pick(ctx context.Context, sessionID string, statuses []engine.ApprovalStatus, cmd ghc.Command) (id, msg string, err error) {
	list, err := b.eng.Approvals(ctx, engine.ApprovalFilter{SessionID: sessionID, Statuses: statuses})
	if err != nil {
		return "", "", err
	}
	if cmd.ID != "" {
		for _, a := range list {
			if ghc.MatchID(cmd.ID, a.ID) {
				return a.ID, "", nil
			}
		}
		return "", fmt.Sprintf("No approval %s is waiting for /%s in this conversation.", cmd.ID, cmd.Verb), nil
	}
	switch len(list) {
	case 0:
		return "", fmt.Sprintf("No approval is waiting for /%s in this conversation.", cmd.Verb), nil
	case 1:
		return list[0].ID, "", nil
	}
	ids := make([]string, len(list))
	for i, a := range list {
		ids[i] = "`" + ghc.ShortID(a.ID) + "`"
	}
	return "", fmt.Sprintf("%d approvals are waiting; name one, e.g. `/%s %s`. Open: %s.", len(list), cmd.Verb, ghc.ShortID(list[0].ID), strings.Join(ids, ", ")), nil
}

// mayStop: the session's person, or anyone who may start sessions here.
func (b *Bridge) mayStop(ctx context.Context, it githubhook.Item, s engine.Session) (bool, error) {
	if strings.EqualFold(it.Author, s.StartedBy) {
		return true, nil
	}
	return b.mayStart(ctx, it)
}

func (b *Bridge) say(ctx context.Context, t ghc.Thread, text string) error {
	_, err := b.client.Comment(ctx, t, text)
	return err
}

// react acknowledges a command; a failed reaction is only logged.
func (b *Bridge) react(ctx context.Context, t ghc.Thread, it githubhook.Item, content string) error {
	if err := b.client.React(ctx, t, it.CommentSource, it.CommentID, content); err != nil {
		b.log.Warn("react to github command", tools.LogThreadKey, t.Key(), tools.LogErr, err)
	}
	return nil
}
