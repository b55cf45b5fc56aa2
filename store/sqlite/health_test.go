package sqlite_test

import (
	"context"
	"database/sql"
	"testing"
	"time"
)

func TestStore_CheckWritableFailsWhileLockedAndRecovers(t *testing.T) {
	st, path := openStore(t)
	ctx := context.Background()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	if err := st.CheckWritable(ctx, now); err != nil {
		t.Fatalf("fresh store: %v", err)
	}
	// Another process holding the write lock is what a stuck writer looks
	// like from here.
	other, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	conn, err := other.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	err = st.CheckWritable(short, now)
	cancel()
	if err == nil {
		t.Fatal("writable while another connection holds the write lock")
	}
	if _, err := conn.ExecContext(ctx, "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	if err := st.CheckWritable(ctx, now.Add(time.Second)); err != nil {
		t.Fatalf("after the lock was released: %v", err)
	}
}
