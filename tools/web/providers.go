package web

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// result is one search hit as every provider is normalised to.
type result struct {
	Title   string `json:"title"`
	URL     string `json:"url"`
	Snippet string `json:"snippet"`
}

// provider is one search backend: how to ask it and how to read its answer.
type provider struct {
	name string
	// base is the default endpoint; SearchConfig.Endpoint replaces it.
	base string
	// path is appended to the endpoint unless the endpoint already ends
	// with it; marginalia builds its whole path per query instead.
	path     string
	needsKey bool
	// maxCount is the most results the API returns for one request.
	maxCount int
	request  func(ctx context.Context, endpoint *url.URL, key, query string, n int) (*http.Request, error)
	parse    func(body []byte) ([]result, error)
}

// providers by name. The request and response shapes follow each
// provider's documentation (checked 2026):
//
//   - tavily:     https://docs.tavily.com/api-reference/endpoint/search
//     POST /search, Authorization: Bearer KEY, {"query","max_results"} (0..20)
//     -> {"results":[{"title","url","content"}]}
//   - brave:      https://api-dashboard.search.brave.com/docs (Web Search API)
//     GET /res/v1/web/search?q=&count= (count <= 20), X-Subscription-Token: KEY
//     -> {"web":{"results":[{"title","url","description"}]}}
//   - searxng:    https://docs.searxng.org/dev/search_api.html
//     GET {endpoint}/search?q=&format=json (the json format must be enabled
//     in the instance's settings.yml) -> {"results":[{"title","url","content"}]}
//   - ollama:     https://docs.ollama.com/capabilities/web-search
//     POST /api/web_search, Authorization: Bearer KEY, {"query","max_results"}
//     (max 10) -> {"results":[{"title","url","content"}]}
//   - mojeek:     https://www.mojeek.com/support/api/search/request_parameters.html
//     and json_response.html: GET /search?q=&api_key=&fmt=json&t= ->
//     {"response":{"status":"OK"|"ERROR: ...","results":[{"title","url","desc"}]}}
//   - marginalia: https://about.marginalia-search.com/article/api/ (the
//     key-in-path API at api.marginalia.nu; the key "public" is shared and
//     rate limited with HTTP 503) GET /{key}/search/{query}?count= ->
//     {"query","license","results":[{"url","title","description"}]}
var providers = map[string]*provider{
	"tavily": {
		name: "tavily", base: "https://api.tavily.com", path: "/search", needsKey: true, maxCount: 20,
		request: func(ctx context.Context, ep *url.URL, key, q string, n int) (*http.Request, error) {
			return postJSON(ctx, ep, map[string]any{"query": q, "max_results": n}, "Authorization", "Bearer "+key)
		},
		parse: parseResults(func(body []byte) ([]rawResult, error) {
			var r struct{ Results []rawResult }
			err := json.Unmarshal(body, &r)
			return r.Results, err
		}),
	},
	"brave": {
		name: "brave", base: "https://api.search.brave.com", path: "/res/v1/web/search", needsKey: true, maxCount: 20,
		request: func(ctx context.Context, ep *url.URL, key, q string, n int) (*http.Request, error) {
			return get(ctx, ep, url.Values{"q": {q}, "count": {strconv.Itoa(n)}}, "X-Subscription-Token", key)
		},
		parse: parseResults(func(body []byte) ([]rawResult, error) {
			var r struct {
				Web struct{ Results []rawResult }
			}
			err := json.Unmarshal(body, &r)
			return r.Web.Results, err
		}),
	},
	"searxng": {
		name: "searxng", path: "/search", maxCount: 20,
		request: func(ctx context.Context, ep *url.URL, _, q string, _ int) (*http.Request, error) {
			// SearXNG has no result count; the list is cut here.
			return get(ctx, ep, url.Values{"q": {q}, "format": {"json"}}, "", "")
		},
		parse: parseResults(func(body []byte) ([]rawResult, error) {
			var r struct{ Results []rawResult }
			err := json.Unmarshal(body, &r)
			return r.Results, err
		}),
	},
	"ollama": {
		name: "ollama", base: "https://ollama.com", path: "/api/web_search", needsKey: true, maxCount: 10,
		request: func(ctx context.Context, ep *url.URL, key, q string, n int) (*http.Request, error) {
			return postJSON(ctx, ep, map[string]any{"query": q, "max_results": n}, "Authorization", "Bearer "+key)
		},
		parse: parseResults(func(body []byte) ([]rawResult, error) {
			var r struct{ Results []rawResult }
			err := json.Unmarshal(body, &r)
			return r.Results, err
		}),
	},
	"mojeek": {
		name: "mojeek", base: "https://api.mojeek.com", path: "/search", needsKey: true, maxCount: 20,
		request: func(ctx context.Context, ep *url.URL, key, q string, n int) (*http.Request, error) {
			return get(ctx, ep, url.Values{"q": {q}, "api_key": {key}, "fmt": {"json"}, "t": {strconv.Itoa(n)}}, "", "")
		},
		parse: parseResults(func(body []byte) ([]rawResult, error) {
			var r struct {
				Response struct {
					Status  string
					Results []rawResult
				}
			}
			if err := json.Unmarshal(body, &r); err != nil {
				return nil, err
			}
			// Mojeek reports errors (a bad key, the daily limit) in status.
			if st := strings.TrimSpace(r.Response.Status); st != "" && !strings.EqualFold(st, "OK") {
				return nil, &providerError{msg: "the provider answered with status " + strconv.Quote(st)}
			}
			return r.Response.Results, nil
		}),
	},
	"marginalia": {
		name: "marginalia", base: "https://api.marginalia.nu", maxCount: 20,
		request: func(ctx context.Context, ep *url.URL, key, q string, n int) (*http.Request, error) {
			u := *ep
			prefix := strings.TrimRight(ep.EscapedPath(), "/")
			raw := prefix + "/" + url.PathEscape(key) + "/search/" + url.PathEscape(q)
			path, err := url.PathUnescape(raw)
			if err != nil {
				return nil, err
			}
			u.Path, u.RawPath = path, raw
			vals := u.Query()
			vals.Set("count", strconv.Itoa(n))
			u.RawQuery = vals.Encode()
			return newRequest(ctx, http.MethodGet, &u, nil)
		},
		parse: parseResults(func(body []byte) ([]rawResult, error) {
			var r struct{ Results []rawResult }
			err := json.Unmarshal(body, &r)
			return r.Results, err
		}),
	},
}

// providerNames lists the providers for messages, in the documented order.
const providerNames = "tavily, brave, searxng, ollama, mojeek or marginalia"

// rawResult accepts every provider's field names for the snippet.
type rawResult struct {
	Title       string `json:"title"`
	URL         string `json:"url"`
	Content     string `json:"content"`     // tavily, searxng, ollama
	Description string `json:"description"` // brave, marginalia
	Desc        string `json:"desc"`        // mojeek
}

// providerError is an answer that is valid JSON but reports a failure.
type providerError struct{ msg string }

func (e *providerError) Error() string { return e.msg }

func parseResults(decode func([]byte) ([]rawResult, error)) func([]byte) ([]result, error) {
	return func(body []byte) ([]result, error) {
		raws, err := decode(body)
		if err != nil {
			return nil, err
		}
		out := make([]result, 0, len(raws))
		for _, r := range raws {
			text := r.Content
			if text == "" {
				text = r.Description
			}
			if text == "" {
				text = r.Desc
			}
			u := strings.TrimSpace(r.URL)
			if u == "" {
				continue
			}
			title := snippet(r.Title)
			if title == "" {
				title = u
			}
			out = append(out, result{Title: clip(title, 300), URL: u, Snippet: clip(snippet(text), maxSnippet)})
		}
		return out, nil
	}
}

// maxSnippet caps one result's snippet, in characters: some providers send
// whole page extracts.
const maxSnippet = 1000

func get(ctx context.Context, ep *url.URL, params url.Values, header, value string) (*http.Request, error) {
	u := *ep
	vals := u.Query()
	for k, vs := range params {
		vals[k] = vs
	}
	u.RawQuery = vals.Encode()
	req, err := newRequest(ctx, http.MethodGet, &u, nil)
	if err == nil && header != "" {
		req.Header.Set(header, value)
	}
	return req, err
}

func postJSON(ctx context.Context, ep *url.URL, body any, header, value string) (*http.Request, error) {
	data, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("encode request: %w", err)
	}
	req, err := newRequest(ctx, http.MethodPost, ep, bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(header, value)
	return req, nil
}

func newRequest(ctx context.Context, method string, u *url.URL, body io.Reader) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, method, u.String(), body)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "brain-web-search/1.0")
	return req, nil
}
