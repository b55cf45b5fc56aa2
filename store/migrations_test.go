package store_test

import (
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"brain/store"
)

func TestLoadMigrations_OrderedAndChecked(t *testing.T) {
	fsys := fstest.MapFS{
		"m/0010_leases.sql": {Data: []byte("B")},
		"m/0002_more.sql":   {Data: []byte("A")},
		"m/notes.txt":       {Data: []byte("ignored")},
	}
	ms, err := store.LoadMigrations(fsys, "m")
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 2 || ms[0].Version != 2 || ms[0].SQL != "A" || ms[1].Name != "0010_leases.sql" {
		t.Fatalf("migrations %+v", ms)
	}
	for name, want := range map[string]string{
		"m/leases.sql":   "NNNN_description",
		"m/0000_x.sql":   "positive version",
		"m/0002_dup.sql": "already used",
	} {
		bad := fstest.MapFS{"m/0002_more.sql": {Data: []byte("A")}, name: {Data: []byte("x")}}
		if _, err := store.LoadMigrations(bad, "m"); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v, want %q", name, err, want)
		}
	}
}

// A migration numbered below the newest applied one still applies: the
// versions need not be consecutive, and a build may bring one under a
// version the database already has.
func TestPendingMigrations_AppliesEveryMissingVersion(t *testing.T) {
	ms := []store.Migration{{Version: 1}, {Version: 6}, {Version: 8}, {Version: 10}, {Version: 11}}
	todo, err := store.PendingMigrations(ms, map[int]bool{1: true, 6: true, 10: true, 11: true})
	if err != nil {
		t.Fatal(err)
	}
	var got []int
	for _, m := range todo {
		got = append(got, m.Version)
	}
	if !slices.Equal(got, []int{8}) {
		t.Errorf("pending = %v, want [8]", got)
	}
	if _, err := store.PendingMigrations(ms, map[int]bool{1: true, 7: true}); err == nil || !strings.Contains(err.Error(), "newer than this build") {
		t.Errorf("an unknown applied version: err = %v, want it refused as newer", err)
	}
}
