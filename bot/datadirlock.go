package bot

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// ErrDataDirInUse is New's error when another brain process holds the
// data directory's lock: `brain chat` then talks to that daemon's API.
var ErrDataDirInUse = errors.New("data_dir locked")

// lockDataDir takes an exclusive lock so two brain processes never run
// engines over one database (each would think the other's turns crashed).
func lockDataDir(dir string) (*os.File, error) {
	path := filepath.Join(dir, "brain.lock")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open lock %s: %w", path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("data_dir %s is in use by another brain process (brain serve or brain chat); stop it or use another data_dir: %w", dir, ErrDataDirInUse)
	}
	return f, nil
}
