// Package retentionbench measures what the retention job costs the turns
// running beside it: a million expired events deleted, batch by batch,
// while one-round turns run on an active session, against the same turns
// with nothing being deleted, in one run, on both stores and two models
// (one that answers at once, one after 50 ms). Run:
//
//	go test ./bench/retention -run '^$' -bench . -benchtime 1x -timeout 3h
//
// -bench '/store=sqlite/model=50ms' picks one case; BRAIN_BENCH_EVENTS
// deletes fewer events for a quick look, BRAIN_BENCH_DUTY sets
// retention.duty.
//
// It has no code outside its tests; nothing imports it.
package retentionbench
