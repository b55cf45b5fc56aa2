// Package contextbench measures what prompt caching and parallel tool
// calls buy a long session, with the real engine, SQLite store and
// Anthropic SDK against the fake model server (test double), whose usage
// simulates Anthropic's prompt cache. Run:
//
//	go test ./bench/context -run TestReport -v    (the README's numbers)
//	go test ./bench/context -bench . -benchtime 3x
//
// It has no code outside its tests; it imports the engine, the SQLite
// store and the fake model server, and nothing imports it.
package contextbench
