package web

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// maxIDToken bounds the id_token a token exchange may return.
const maxIDToken = 16 << 10

// idClaims are the id_token claims Sign in with Slack relies on.
type idClaims struct {
	Issuer   string   `json:"iss"`
	Subject  string   `json:"sub"`
	Audience audience `json:"aud"`
	Expires  int64    `json:"exp"`
	Nonce    string   `json:"nonce"`
	UserID   string   `json:"https://slack.com/user_id"`
	TeamID   string   `json:"https://slack.com/team_id"`
	Name     string   `json:"name"`
	Email    string   `json:"email"`
}

// audience is "aud": a string or a list of strings.
type audience []string

func (a *audience) UnmarshalJSON(b []byte) error {
	var one string
	if json.Unmarshal(b, &one) == nil {
		*a = []string{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return errors.New("aud is neither a string nor a list of strings")
	}
	*a = many
	return nil
}

// slackIssuer is the iss of Slack's id tokens.
const slackIssuer = "https://slack.com"

// parseIDToken reads an id_token's claims and checks them against the
// sign-in that asked for it: issuer, audience (our client id), expiry
// and nonce. The token comes straight from Slack's token endpoint over
// TLS in exchange for our client secret, which is what authenticates it
// (OpenID Connect Core 3.1.3.7); its signature is not checked.
func parseIDToken(token, clientID, nonce string, now time.Time) (idClaims, error) {
	if len(token) > maxIDToken {
		return idClaims{}, errors.New("id_token is too large")
	}
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return idClaims{}, errors.New("id_token is not a JWT (want header.payload.signature)")
	}
	raw, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return idClaims{}, fmt.Errorf("id_token payload: %w", err)
	}
	var c idClaims
	if err := json.Unmarshal(raw, &c); err != nil {
		return idClaims{}, fmt.Errorf("id_token claims: %w", err)
	}
	switch {
	case c.Issuer != slackIssuer:
		return idClaims{}, fmt.Errorf("id_token issuer is %q, not %s", c.Issuer, slackIssuer)
	case !contains(c.Audience, clientID):
		return idClaims{}, errors.New("id_token was issued to another client")
	case c.Expires == 0 || !now.Before(time.Unix(c.Expires, 0)):
		return idClaims{}, errors.New("id_token has expired")
	case nonce == "" || c.Nonce != nonce:
		return idClaims{}, errors.New("id_token nonce does not match this sign-in")
	case c.UserID == "" && c.Subject == "":
		return idClaims{}, errors.New("id_token names no user")
	}
	if c.UserID == "" {
		c.UserID = c.Subject
	}
	return c, nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
