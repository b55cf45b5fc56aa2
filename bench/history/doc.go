// Package historybench measures what one turn costs the engine as a
// session's event log grows: the same bounded model context (a summary
// and the turns after it), with 10, 1,000, 10,000 and 100,000 events
// before it, on both stores, against a zero-latency in-process model.
// Run:
//
//	go test ./bench/history -run '^$' -bench . -benchtime 40x
//
// It has no code outside its tests; nothing imports it.
package historybench
