// Package web is the web tool family: web_search (one of several search
// providers behind one result shape) and web_fetch (one URL's readable
// text, hardened against server-side request forgery because the URL comes
// from the model).
//
// Failures are tools.Error values the model reads; a misconfigured
// provider is a tool error at call time, not a crash. API keys never appear
// in errors or results. Every request is sent at most once
// (tools.OnceTransport).
//
// It imports only the standard library and brain/tools.
package web
