package github

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	gh "github.com/google/go-github/v62/github"

	"brain/tools"
)

// Installation tokens live an hour; one is minted again this long before
// it expires, so a call never starts with a token about to lapse.
const refreshBefore = 5 * time.Minute

// jwtLifetime is how long an App JWT is valid; GitHub accepts at most ten
// minutes, and iat is set a minute back against clock drift.
const jwtLifetime = 9 * time.Minute

// tokenSource gives the bearer token for the next request.
type tokenSource interface {
	token(ctx context.Context) (string, error)
}

type staticToken string

func (t staticToken) token(context.Context) (string, error) { return string(t), nil }

// authTransport adds the bearer token to requests for the API host (never
// to a host a redirect leads to) and marks the call's sent flag when a
// connection is obtained for it.
type authTransport struct {
	base http.RoundTripper
	src  tokenSource
	host string // the API's host; set by newClient
}

func (t *authTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	var tok string
	if req.URL.Host == t.host {
		// A call acting as a person carries their user token (actas.go).
		tok = userToken(ctx)
		var err error
		if tok == "" {
			tok, err = t.src.token(ctx)
		}
		if err != nil {
			if req.Body != nil {
				req.Body.Close()
			}
			return nil, err
		}
	}
	if f := sentFlag(ctx); f != nil {
		ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
			GotConn: func(httptrace.GotConnInfo) { f.Store(true) },
		})
	}
	r := req.Clone(ctx)
	if tok != "" {
		r.Header.Set("Authorization", "Bearer "+tok)
	}
	return t.base.RoundTrip(r)
}

type sentKey struct{}

// withSentFlag returns a context whose requests set the flag once a
// connection is obtained for them: before that, nothing can have been sent.
func withSentFlag(ctx context.Context) (context.Context, *atomic.Bool) {
	f := new(atomic.Bool)
	return context.WithValue(ctx, sentKey{}, f), f
}

func sentFlag(ctx context.Context) *atomic.Bool {
	f, _ := ctx.Value(sentKey{}).(*atomic.Bool)
	return f
}

// mintError is a failure to get an installation token: the request that
// needed it was never sent.
type mintError struct{ msg string }

func (e *mintError) Error() string { return e.msg }

// appTokens mints installation tokens from JWTs signed with the App's key
// and caches each until shortly before it expires.
type appTokens struct {
	appID, installationID int64
	key                   *rsa.PrivateKey
	mint                  *gh.Client // unauthenticated; the JWT is added per mint
	now                   func() time.Time
	secrets               *secrets

	mu      sync.Mutex
	tok     string
	expires time.Time
}

func newAppTokens(app App, base *url.URL, transport http.RoundTripper, now func() time.Time, sec *secrets) (*appTokens, error) {
	if app.AppID <= 0 {
		return nil, errors.New("app.app_id must be >= 1")
	}
	if app.InstallationID <= 0 {
		return nil, errors.New("app.installation_id must be >= 1")
	}
	key, err := parseKey(app.PrivateKey)
	if err != nil {
		return nil, err
	}
	mint := gh.NewClient(&http.Client{Transport: transport, CheckRedirect: readRedirectsOnly})
	mint.BaseURL = base
	mint.UserAgent = "brain"
	return &appTokens{appID: app.AppID, installationID: app.InstallationID, key: key, mint: mint, now: now, secrets: sec}, nil
}

// parseKey reads an RSA private key from PEM. Errors never quote the key.
func parseKey(data []byte) (*rsa.PrivateKey, error) {
	block, _ := pem.Decode(data)
	if block == nil {
		return nil, errors.New("app.private_key_file holds no PEM block")
	}
	switch block.Type {
	case "RSA PRIVATE KEY":
		k, err := x509.ParsePKCS1PrivateKey(block.Bytes)
		if err != nil {
			return nil, errors.New("app.private_key_file: not a valid RSA private key")
		}
		return k, nil
	case "PRIVATE KEY":
		k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
		if err != nil {
			return nil, errors.New("app.private_key_file: not a valid PKCS #8 private key")
		}
		rk, ok := k.(*rsa.PrivateKey)
		if !ok {
			return nil, errors.New("app.private_key_file: GitHub App keys are RSA; this one is not")
		}
		return rk, nil
	}
	return nil, fmt.Errorf("app.private_key_file holds a %q PEM block, not a private key", block.Type)
}

func (a *appTokens) token(ctx context.Context) (string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	now := a.now()
	if a.tok != "" && now.Before(a.expires.Add(-refreshBefore)) {
		return a.tok, nil
	}
	jwt, err := a.jwt(now)
	if err != nil {
		return "", &mintError{msg: "could not sign the GitHub App JWT: " + err.Error()}
	}
	a.secrets.addDynamic(jwt)
	it, _, err := a.mint.WithAuthToken(jwt).Apps.CreateInstallationToken(ctx, a.installationID, &gh.InstallationTokenOptions{})
	if err != nil {
		return "", &mintError{msg: fmt.Sprintf("could not get an installation token for GitHub App %d, installation %d: %s",
			a.appID, a.installationID, a.secrets.scrubber().String(err.Error()))}
	}
	if it.GetToken() == "" {
		return "", &mintError{msg: "GitHub answered the installation token request without a token"}
	}
	a.secrets.addDynamic(it.GetToken())
	a.tok = it.GetToken()
	a.expires = it.GetExpiresAt().Time
	if a.expires.IsZero() {
		a.expires = now.Add(time.Hour)
	}
	return a.tok, nil
}

// jwt signs the App's JSON Web Token (RS256) as GitHub documents it.
func (a *appTokens) jwt(now time.Time) (string, error) {
	enc := base64.RawURLEncoding
	header := enc.EncodeToString([]byte(`{"alg":"RS256","typ":"JWT"}`))
	claims, err := json.Marshal(map[string]any{
		"iat": now.Add(-time.Minute).Unix(),
		"exp": now.Add(jwtLifetime).Unix(),
		"iss": strconv.FormatInt(a.appID, 10),
	})
	if err != nil {
		return "", err
	}
	input := header + "." + enc.EncodeToString(claims)
	sum := sha256.Sum256([]byte(input))
	sig, err := rsa.SignPKCS1v15(rand.Reader, a.key, crypto.SHA256, sum[:])
	if err != nil {
		return "", err
	}
	return input + "." + enc.EncodeToString(sig), nil
}

// maxDynamic is how many minted secrets (JWTs, installation tokens) the
// scrubber keeps: older ones have expired, and a result cannot hold them.
const maxDynamic = 16

// maxUsers is how many people's user tokens the scrubber keeps, apart
// from the minted ones so that many people cannot push the App's current
// token out.
const maxUsers = 64

// secrets is the family's scrubber: the configured token, the secrets
// minted since and the user tokens calls acted with.
type secrets struct {
	mu      sync.Mutex
	static  []string
	dynamic []string
	users   []string
	s       *tools.Scrubber
}

func (s *secrets) addUser(v string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if slices.Contains(s.users, v) {
		return
	}
	s.users = append(s.users, v)
	if len(s.users) > maxUsers {
		s.users = s.users[len(s.users)-maxUsers:]
	}
	s.rebuild()
}

func (s *secrets) addStatic(v string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.static = append(s.static, v)
	s.rebuild()
}

func (s *secrets) addDynamic(v string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dynamic = append(s.dynamic, v)
	if len(s.dynamic) > maxDynamic {
		s.dynamic = s.dynamic[len(s.dynamic)-maxDynamic:]
	}
	s.rebuild()
}

func (s *secrets) rebuild() {
	all := append(append([]string(nil), s.static...), s.dynamic...)
	s.s = tools.NewScrubber(append(all, s.users...)...)
}

func (s *secrets) scrubber() *tools.Scrubber {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.s
}
