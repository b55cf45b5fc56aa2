package postgres

import (
	"slices"
	"strings"
	"testing"
)

// A migration numbered below the newest applied one still applies: the
// versions need not be consecutive, and a build may bring one under a
// version the database already has.
func TestPending_AppliesEveryMissingVersion(t *testing.T) {
	ms := []migration{{version: 1}, {version: 6}, {version: 8}, {version: 10}, {version: 11}}
	todo, err := pending(ms, map[int]bool{1: true, 6: true, 10: true, 11: true})
	if err != nil {
		t.Fatal(err)
	}
	var got []int
	for _, m := range todo {
		got = append(got, m.version)
	}
	if !slices.Equal(got, []int{8}) {
		t.Errorf("pending = %v, want [8]", got)
	}
	if _, err := pending(ms, map[int]bool{1: true, 7: true}); err == nil || !strings.Contains(err.Error(), "newer than this build") {
		t.Errorf("an unknown applied version: err = %v, want it refused as newer", err)
	}
}
