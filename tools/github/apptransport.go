package github

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// AppTransport authenticates every request to the REST API at baseURL (""
// api.github.com) as the App's installation, minting installation tokens
// as the github_* tools do (cached until shortly before they expire).
// GitHub conversations use it, so the app comments as itself. base nil is
// http.DefaultTransport.
func AppTransport(app App, baseURL string, base http.RoundTripper, now func() time.Time) (http.RoundTripper, error) {
	if base == nil {
		base = http.DefaultTransport
	}
	if now == nil {
		now = time.Now
	}
	if baseURL == "" {
		baseURL = "https://api.github.com/"
	}
	if !strings.HasSuffix(baseURL, "/") {
		baseURL += "/"
	}
	u, err := url.Parse(baseURL)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("github: base url %q", baseURL)
	}
	src, err := newAppTokens(app, u, base, now, &secrets{})
	if err != nil {
		return nil, fmt.Errorf("github app: %w", err)
	}
	return &authTransport{base: base, src: src, host: u.Host}, nil
}
