// Package retentionbench measures what the retention job costs the turns
// running beside it: a million expired events deleted, batch by batch,
// while one-round turns run on an active session, against the same turns
// with nothing being deleted, in one run, on both stores. Run:
//
//	go test ./bench/retention -run '^$' -bench . -benchtime 1x
//
// It has no code outside its tests; nothing imports it.
package retentionbench
