package github

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"

	"brain/tools"
)

// Acting as a person (Config.ActsAs). A tool that acts as the person who
// asked (requester) or the person whose vote decided its approval
// (approver) sends that person's GitHub App user access token instead of
// the App's: what it writes is authored by them, and it can do only what
// both the App and the person may (GitHub intersects the two). Nothing
// else changes: the allow-list, the exactly-once markers, the scrubbing.
//
// github_propose_change always acts as the App: its push uses a token
// minted for the one repository with contents permission alone, and a
// user token cannot be narrowed like that (it reaches every repository
// the person and the App share), so it never enters the push.

// UserTokens gives the GitHub user access token of the person an
// identity belongs to. A person who has none (never connected, revoked,
// refresh refused) is a *tools.ConnectionRequired; nothing was sent.
type UserTokens interface {
	UserToken(ctx context.Context, tool string, who tools.Identity) (string, error)
}

// ActsAsDefault is the ActsAs key for every tool that may act as a person
// and is not named.
const ActsAsDefault = "default"

// appOnly are the tools that always act as the App.
var appOnly = map[string]string{
	proposeTool: "its push uses a token narrowed to one repository, which a user token cannot be",
}

// actsAsModes resolves ActsAs over the family's tools: tool name -> mode
// (tools acting as the App are left out). Errors name the key.
func actsAsModes(actsAs map[string]string, defs []tools.Definition, users UserTokens) (map[string]string, error) {
	known := map[string]tools.Definition{}
	for _, d := range defs {
		known[d.Name] = d
	}
	keys := make([]string, 0, len(actsAs))
	for k := range actsAs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		mode := actsAs[k]
		switch mode {
		case tools.ActsAsApp, tools.ActsAsRequester, tools.ActsAsApprover:
		default:
			return nil, fmt.Errorf("acts_as.%s: %q is not app, requester or approver", k, mode)
		}
		if k == ActsAsDefault {
			continue
		}
		d, ok := known[k]
		if !ok {
			return nil, fmt.Errorf("acts_as.%s: no such GitHub tool", k)
		}
		if why, ok := appOnly[k]; ok && mode != tools.ActsAsApp {
			return nil, fmt.Errorf("acts_as.%s: always acts as the app (%s)", k, why)
		}
		if mode == tools.ActsAsApprover && !d.NeedsApproval() {
			return nil, fmt.Errorf("acts_as.%s: approver is for tools that wait for approval; this one reads (use requester)", k)
		}
	}
	out := map[string]string{}
	for _, d := range defs {
		mode, ok := actsAs[d.Name]
		if !ok {
			mode = actsAs[ActsAsDefault]
		}
		if _, only := appOnly[d.Name]; only || mode == "" || mode == tools.ActsAsApp {
			continue
		}
		out[d.Name] = mode
	}
	if len(out) > 0 && users == nil {
		return nil, fmt.Errorf("acts_as: tools acting as a person need user_tokens (GitHub App user access tokens)")
	}
	return out, nil
}

// actingAs wraps d so its requests carry the user token of the person it
// acts as under mode. With approver, the preview (before anyone voted)
// reads as the App: the card is the same whoever will decide, and the
// requester need not be connected for someone else to apply.
func (c *client) actingAs(d tools.Definition, mode string, users UserTokens) tools.Definition {
	if run := d.Run; run != nil {
		d.Run = func(ctx context.Context, call tools.Call) (json.RawMessage, error) {
			ctx, err := c.asPerson(ctx, d.Name, call.Actor(mode), users)
			if err != nil {
				return nil, err
			}
			return run(ctx, call)
		}
	}
	if preview := d.Preview; preview != nil && mode == tools.ActsAsRequester {
		d.Preview = func(ctx context.Context, call tools.Call) (tools.Card, error) {
			ctx, err := c.asPerson(ctx, d.Name, call.Requester, users)
			if err != nil {
				return tools.Card{}, err
			}
			return preview(ctx, call)
		}
	}
	if apply := d.Apply; apply != nil {
		d.Apply = func(ctx context.Context, call tools.Call, dec tools.Decision) (json.RawMessage, error) {
			ctx, err := c.asPerson(ctx, d.Name, call.Actor(mode), users)
			if err != nil {
				return nil, err
			}
			return apply(ctx, call, dec)
		}
	}
	return d
}

// asPerson returns ctx carrying who's user token, or the error that
// refuses the call before anything is sent.
func (c *client) asPerson(ctx context.Context, tool string, who tools.Identity, users UserTokens) (context.Context, error) {
	// A schedule's call is UserTokens' to refuse, or to send through
	// the service account an admin marked (tools.HolderOf).
	if who.IsZero() {
		return nil, tools.Failed("%s: acts as a person (acts_as), and this call has nobody to act as; nothing was sent", tool)
	}
	tok, err := users.UserToken(ctx, tool, who)
	if err != nil {
		if _, ok := tools.AsConnectionRequired(err); ok {
			return nil, err
		}
		return nil, tools.Failed("%s: get %s's GitHub token: %s; nothing was sent", tool, who.ExternalID, c.secrets.scrubber().String(err.Error()))
	}
	if tok == "" {
		return nil, &tools.ConnectionRequired{Tool: tool, Provider: UserProvider, Identity: who}
	}
	c.secrets.addUser(tok)
	return context.WithValue(ctx, userTokenKey{}, tok), nil
}

// UserProvider is the connections provider of GitHub user tokens.
const UserProvider = "github"

type userTokenKey struct{}

// userToken is the user token a call's requests carry, "" for the App's.
func userToken(ctx context.Context) string {
	tok, _ := ctx.Value(userTokenKey{}).(string)
	return tok
}
