package bot

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"brain/engine"
	"brain/internal/oauthclient"
	"brain/store"
)

// verifyConnection checks a new grant before it is stored. For GitHub
// user tokens, the GitHub account must be the person's: when the person
// is linked to GitHub logins (a GitHub conversation links the login that
// asked), the token's login must be one of them. A connect link finished
// by someone else (Mallory opening a link made for Alice) would otherwise
// attach Mallory's account to Alice; it is refused and nothing is stored.
func (a *App) verifyConnection(ctx context.Context, provider, personID string, tok oauthclient.Token) error {
	if provider != githubProvider || personID == "" || a.cfg.Tools.GitHub == nil {
		return nil
	}
	p, err := a.store.Person(ctx, personID)
	if errors.Is(err, engine.ErrNotFound) {
		return nil
	} else if err != nil {
		return fmt.Errorf("read person %s: %w", personID, err)
	}
	var logins []string
	for _, id := range p.Identities {
		if id.Surface == store.SurfaceGitHub {
			logins = append(logins, strings.ToLower(id.ExternalID))
		}
	}
	if len(logins) == 0 {
		return nil // nothing to compare with: their first GitHub account
	}
	login, err := githubLogin(ctx, a.cfg.Tools.GitHub.BaseURL, tok.AccessToken)
	if err != nil {
		return fmt.Errorf("read the GitHub login: %w", err)
	}
	if !slices.Contains(logins, strings.ToLower(login)) {
		return engine.Errorf(engine.CodeForbidden, "this is GitHub account @%s, and the link was made for @%s; nothing was stored. Open the link signed in to GitHub as @%s",
			login, strings.Join(logins, ", @"), logins[0])
	}
	return nil
}
