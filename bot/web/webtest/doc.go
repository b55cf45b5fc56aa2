// Package webtest drives the web console in a real browser: a whole
// brain (real config file, SQLite file and HTTP server, the fake model,
// Slack's fake Web API) and headless Chromium through chromedp, as a
// person would use it. It holds tests only; it is a package of its own so
// its browser runs beside the other suites.
//
// The tests skip when Chromium is not installed, and fail instead when
// BRAIN_REQUIRE_CHROMIUM=1 (make test sets it).
package webtest
