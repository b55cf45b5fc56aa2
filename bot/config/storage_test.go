package config

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func TestStoragePostgres(t *testing.T) {
	dsn := "postgres://brain:s3cret-pw@db.internal:5432/brain?sslmode=require"
	c := mustLoadYAML(t, minimalYAML+`
storage: {driver: postgres, dsn: "${BRAIN_DATABASE_URL}"}
`, map[string]string{"BRAIN_DATABASE_URL": dsn})
	if c.Storage.Driver != DriverPostgres || c.Storage.DSN != dsn {
		t.Errorf("storage = %+v", c.Storage)
	}
	if c.Storage.Synchronous != "" {
		t.Errorf("storage.synchronous = %q, want no SQLite default under postgres", c.Storage.Synchronous)
	}
	if c.Storage.LeaseTTL.Std() != 30*time.Second || c.Storage.PollInterval.Std() != time.Second {
		t.Errorf("storage lease_ttl, poll_interval = %v, %v; want 30s, 1s", c.Storage.LeaseTTL, c.Storage.PollInterval)
	}
	for _, want := range []string{dsn, "s3cret-pw"} {
		if !slices.Contains(c.Secrets(), want) {
			t.Errorf("Secrets() misses %q", want)
		}
	}
}

func TestStoragePostgresUnsetDSN(t *testing.T) {
	_, err := loadYAML(t, minimalYAML+`
storage: {driver: postgres, dsn: "${BRAIN_DATABASE_URL}"}
`, nil)
	if err == nil || !strings.Contains(err.Error(), "storage.dsn: required, but the environment variable BRAIN_DATABASE_URL is not set") {
		t.Fatalf("err = %v", err)
	}
}

func TestDSNPassword(t *testing.T) {
	for dsn, want := range map[string][]string{
		"":                                      nil,
		"postgres://u:pw@h/db":                  {"postgres://u:pw@h/db", "pw"},
		"postgres://u@h/db":                     {"postgres://u@h/db"},
		"host=h user=u password='p w' dbname=b": {"host=h user=u password='p w' dbname=b", "p w"},
		"host=h user=u password=pw dbname=b":    {"host=h user=u password=pw dbname=b", "pw"},
	} {
		if got := dsnPassword(dsn); !slices.Equal(got, want) {
			t.Errorf("dsnPassword(%q) = %q, want %q", dsn, got, want)
		}
	}
}
