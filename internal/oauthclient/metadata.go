// Package oauthclient is brain's OAuth 2.1 client for servers that follow
// the MCP authorization spec (2025-11-25): discovery from a 401's
// WWW-Authenticate challenge and protected resource metadata (RFC 9728),
// authorization server metadata (RFC 8414 and OpenID discovery), client
// registration (a pre-registered client, a client ID metadata document, or
// dynamic registration, RFC 7591), the authorization code grant with PKCE
// S256, resource indicators (RFC 8707) and the iss parameter (RFC 9207),
// refresh, and an http.RoundTripper that authorizes requests, steps up
// scopes on insufficient_scope and refreshes once on 401.
//
// Tokens, client secrets and PKCE verifiers are secrets: they never appear
// in this package's errors. It imports only the standard library.
package oauthclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// maxBody caps every metadata, registration and token response read.
const maxBody = 1 << 20

// Challenge is what a WWW-Authenticate: Bearer header says.
type Challenge struct {
	ResourceMetadata string // resource_metadata: where the PRM document is
	Scope            string // scope: what the request needs
	Error            string // error: invalid_token, insufficient_scope, ...
}

// ParseChallenge reads the Bearer challenge of WWW-Authenticate header
// values; ok is false when there is none.
func ParseChallenge(headers []string) (c Challenge, ok bool) {
	for _, h := range headers {
		params, found := bearerParams(h)
		if !found {
			continue
		}
		return Challenge{ResourceMetadata: params["resource_metadata"], Scope: params["scope"], Error: params["error"]}, true
	}
	return Challenge{}, false
}

// bearerParams parses `Bearer k="v", k2=v2` (RFC 9110 auth-params) from one
// header value that may hold several challenges.
func bearerParams(h string) (map[string]string, bool) {
	i := indexFold(h, "bearer")
	if i < 0 {
		return nil, false
	}
	rest := h[i+len("bearer"):]
	if rest != "" && rest[0] != ' ' && rest[0] != '\t' && rest[0] != ',' {
		return nil, false
	}
	params := map[string]string{}
	for {
		rest = strings.TrimLeft(rest, " \t,")
		eq := strings.IndexByte(rest, '=')
		if eq <= 0 {
			return params, true
		}
		key := strings.ToLower(strings.TrimSpace(rest[:eq]))
		if strings.ContainsAny(key, " \t") {
			// The next challenge's scheme: this one is over.
			return params, true
		}
		rest = strings.TrimLeft(rest[eq+1:], " \t")
		var val string
		if strings.HasPrefix(rest, `"`) {
			var b strings.Builder
			j := 1
			for ; j < len(rest); j++ {
				if rest[j] == '\\' && j+1 < len(rest) {
					j++
					b.WriteByte(rest[j])
					continue
				}
				if rest[j] == '"' {
					break
				}
				b.WriteByte(rest[j])
			}
			val = b.String()
			rest = rest[min(j+1, len(rest)):]
		} else {
			end := strings.IndexAny(rest, ", \t")
			if end < 0 {
				end = len(rest)
			}
			val, rest = rest[:end], rest[end:]
		}
		if _, dup := params[key]; !dup {
			params[key] = val
		}
	}
}

func indexFold(s, sub string) int {
	return strings.Index(strings.ToLower(s), sub)
}

// ResourceMetadata is an OAuth protected resource metadata document
// (RFC 9728).
type ResourceMetadata struct {
	Resource             string   `json:"resource"`
	AuthorizationServers []string `json:"authorization_servers"`
	ScopesSupported      []string `json:"scopes_supported,omitempty"`
}

// ServerMetadata is an authorization server metadata document (RFC 8414,
// or OpenID Connect discovery).
type ServerMetadata struct {
	Issuer                            string   `json:"issuer"`
	AuthorizationEndpoint             string   `json:"authorization_endpoint"`
	TokenEndpoint                     string   `json:"token_endpoint"`
	RegistrationEndpoint              string   `json:"registration_endpoint,omitempty"`
	RevocationEndpoint                string   `json:"revocation_endpoint,omitempty"`
	ScopesSupported                   []string `json:"scopes_supported,omitempty"`
	GrantTypesSupported               []string `json:"grant_types_supported,omitempty"`
	TokenEndpointAuthMethodsSupported []string `json:"token_endpoint_auth_methods_supported,omitempty"`
	CodeChallengeMethodsSupported     []string `json:"code_challenge_methods_supported,omitempty"`
	ClientIDMetadataDocumentSupported bool     `json:"client_id_metadata_document_supported,omitempty"`
	// ISSParameterSupported: the authorization response carries iss
	// (RFC 9207), and a response without it must be refused.
	ISSParameterSupported bool `json:"authorization_response_iss_parameter_supported,omitempty"`
}

// Discovery is what discovery found for a protected resource.
type Discovery struct {
	Resource ResourceMetadata
	Server   ServerMetadata
	// Challenge is the 401's challenge discovery started from.
	Challenge Challenge
}

// Discover finds the protected resource metadata of serverURL (from the
// challenge's resource_metadata, else the well-known paths of RFC 9728),
// checks that it names serverURL, and fetches the metadata of its first
// authorization server.
func (c *Client) Discover(ctx context.Context, serverURL string, ch Challenge) (Discovery, error) {
	rm, err := c.resourceMetadata(ctx, serverURL, ch.ResourceMetadata)
	if err != nil {
		return Discovery{}, err
	}
	if err := resourceMatches(rm.Resource, serverURL); err != nil {
		return Discovery{}, err
	}
	if len(rm.AuthorizationServers) == 0 {
		return Discovery{}, errors.New("discover: the protected resource metadata names no authorization server")
	}
	sm, err := c.ServerMetadata(ctx, rm.AuthorizationServers[0])
	if err != nil {
		return Discovery{}, err
	}
	return Discovery{Resource: rm, Server: sm, Challenge: ch}, nil
}

func (c *Client) resourceMetadata(ctx context.Context, serverURL, hinted string) (ResourceMetadata, error) {
	var candidates []string
	if hinted != "" {
		candidates = append(candidates, hinted)
	} else {
		u, err := url.Parse(serverURL)
		if err != nil {
			return ResourceMetadata{}, fmt.Errorf("discover: invalid server url")
		}
		origin := u.Scheme + "://" + u.Host
		if p := strings.TrimSuffix(u.EscapedPath(), "/"); p != "" {
			candidates = append(candidates, origin+"/.well-known/oauth-protected-resource"+p)
		}
		candidates = append(candidates, origin+"/.well-known/oauth-protected-resource")
	}
	var last error
	for _, cand := range candidates {
		var rm ResourceMetadata
		err := c.getJSON(ctx, cand, &rm)
		if err == nil {
			if rm.Resource == "" {
				return ResourceMetadata{}, fmt.Errorf("discover: the protected resource metadata at %s has no resource", cand)
			}
			return rm, nil
		}
		last = err
	}
	return ResourceMetadata{}, fmt.Errorf("discover protected resource metadata: %w", last)
}

// resourceMatches checks RFC 9728's rule that the metadata is about the
// server asked: same scheme and host, and the server's path under the
// resource's.
func resourceMatches(resource, serverURL string) error {
	r, err1 := url.Parse(resource)
	s, err2 := url.Parse(serverURL)
	if err1 != nil || err2 != nil {
		return errors.New("discover: the protected resource metadata's resource is not a url")
	}
	rp, sp := strings.TrimSuffix(r.Path, "/"), strings.TrimSuffix(s.Path, "/")
	if !strings.EqualFold(r.Scheme, s.Scheme) || !strings.EqualFold(r.Host, s.Host) ||
		(sp != rp && !strings.HasPrefix(sp, rp+"/")) {
		return fmt.Errorf("discover: the protected resource metadata is for %s, not for this server: refusing to authorize", resource)
	}
	return nil
}

// ServerMetadata fetches an authorization server's metadata by RFC 8414's
// and OpenID discovery's well-known URLs, in the MCP spec's order, and
// checks its issuer is the one asked for (RFC 8414 section 3.3).
func (c *Client) ServerMetadata(ctx context.Context, issuer string) (ServerMetadata, error) {
	u, err := url.Parse(issuer)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return ServerMetadata{}, fmt.Errorf("discover: authorization server %q is not an http(s) url", issuer)
	}
	origin := u.Scheme + "://" + u.Host
	p := strings.TrimSuffix(u.EscapedPath(), "/")
	var candidates []string
	if p == "" {
		candidates = []string{origin + "/.well-known/oauth-authorization-server", origin + "/.well-known/openid-configuration"}
	} else {
		candidates = []string{
			origin + "/.well-known/oauth-authorization-server" + p,
			origin + "/.well-known/openid-configuration" + p,
			origin + p + "/.well-known/openid-configuration",
		}
	}
	var last error
	for _, cand := range candidates {
		var sm ServerMetadata
		if err := c.getJSON(ctx, cand, &sm); err != nil {
			last = err
			continue
		}
		// A simple string comparison: no normalisation (RFC 8414 3.3).
		if sm.Issuer != issuer {
			return ServerMetadata{}, fmt.Errorf("discover: the authorization server metadata at %s names issuer %q, not %q: refusing it", cand, sm.Issuer, issuer)
		}
		if sm.AuthorizationEndpoint == "" || sm.TokenEndpoint == "" {
			return ServerMetadata{}, fmt.Errorf("discover: the authorization server metadata of %s lacks an authorization or token endpoint", issuer)
		}
		return sm, nil
	}
	return ServerMetadata{}, fmt.Errorf("discover authorization server metadata of %s: %w", issuer, last)
}

// statusError is a metadata fetch answered with another status than 200.
type statusError struct {
	url    string
	status int
}

func (e *statusError) Error() string { return fmt.Sprintf("GET %s: status %d", e.url, e.status) }

func (c *Client) getJSON(ctx context.Context, target string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return fmt.Errorf("GET %s: %w", target, err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.httpClient().Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxBody))
		return &statusError{url: target, status: resp.StatusCode}
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	if err != nil {
		return fmt.Errorf("GET %s: %w", target, err)
	}
	if len(body) > maxBody {
		return fmt.Errorf("GET %s: the document is over %d bytes", target, maxBody)
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("GET %s: not a metadata document: %w", target, err)
	}
	return nil
}
