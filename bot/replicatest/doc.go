// Package replicatest holds the replicas test: three real `brain serve`
// processes (the built binary) on one PostgreSQL, driven over their HTTP
// API and the Slack Events API, some of them SIGKILLed mid-turn and
// mid-apply. It is a package of its own so the slow suite runs in
// parallel with the others; it has no code but its tests.
package replicatest
