// Package filestore keeps the files people share with sessions: once, by
// the SHA-256 of their content, in a folder of the data directory under a
// size budget (least recently used files go first), and loads them for the
// model by the type their content shows, not their name. A file evicted,
// or held only by another replica, is fetched again from where it came.
//
// It imports engine (the FileRef and Attachment it speaks) and nothing of
// the channels: fetching is a function the wiring hands in.
package filestore

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"
)

// ErrNotFound is Get's error for a hash the store does not hold.
var ErrNotFound = errors.New("file not in the store")

// Store is a content-addressed folder of files. Safe for concurrent use
// within a process; replicas each keep their own.
type Store struct {
	dir    string
	budget int64
	now    func() time.Time

	mu sync.Mutex
}

// Open makes dir (if needed) and keeps at most budget bytes in it.
func Open(dir string, budget int64, now func() time.Time) (*Store, error) {
	if budget <= 0 {
		return nil, fmt.Errorf("file store budget must be positive, got %d", budget)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("file store: %w", err)
	}
	if now == nil {
		now = time.Now
	}
	return &Store{dir: dir, budget: budget, now: now}, nil
}

// Dir is the folder the store keeps its files in.
func (s *Store) Dir() string { return s.dir }

// Hash is the store's name for data: hex SHA-256.
func Hash(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

func (s *Store) path(hash string) (string, error) {
	if len(hash) != 64 {
		return "", fmt.Errorf("file hash %q: want 64 hex digits", hash)
	}
	if _, err := hex.DecodeString(hash); err != nil {
		return "", fmt.Errorf("file hash %q: %w", hash, err)
	}
	return filepath.Join(s.dir, hash[:2], hash), nil
}

// Put stores data (once: the same content is one file) and returns its
// hash, then evicts the least recently used files beyond the budget.
func (s *Store) Put(data []byte) (string, error) {
	if int64(len(data)) > s.budget {
		return "", fmt.Errorf("file of %d bytes is over the store budget of %d", len(data), s.budget)
	}
	hash := Hash(data)
	p, _ := s.path(hash)
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := os.Stat(p); err == nil {
		return hash, s.touch(p)
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return "", fmt.Errorf("store file: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(p), ".tmp-*")
	if err != nil {
		return "", fmt.Errorf("store file: %w", err)
	}
	_, werr := tmp.Write(data)
	serr := tmp.Sync()
	cerr := tmp.Close()
	if err := errors.Join(werr, serr, cerr); err != nil {
		os.Remove(tmp.Name())
		return "", fmt.Errorf("store file: %w", err)
	}
	if err := os.Rename(tmp.Name(), p); err != nil {
		os.Remove(tmp.Name())
		return "", fmt.Errorf("store file: %w", err)
	}
	if err := s.touch(p); err != nil {
		return "", err
	}
	return hash, s.evict(p)
}

// Get returns the content of hash, ErrNotFound when it is not held (or
// no longer matches its hash). A read counts as a use for eviction.
func (s *Store) Get(hash string) ([]byte, error) {
	p, err := s.path(hash)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	data, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("read stored file: %w", err)
	}
	if Hash(data) != hash {
		os.Remove(p) // damaged: fetch it again
		return nil, ErrNotFound
	}
	return data, s.touch(p)
}

// touch marks p used now (its modification time orders eviction).
func (s *Store) touch(p string) error {
	now := s.now()
	if err := os.Chtimes(p, now, now); err != nil {
		return fmt.Errorf("touch stored file: %w", err)
	}
	return nil
}

// evict removes the least recently used files until the store is within
// its budget, never keep (the file just written).
func (s *Store) evict(keep string) error {
	type entry struct {
		path string
		size int64
		used time.Time
	}
	var entries []entry
	var total int64
	err := filepath.WalkDir(s.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Base(p)[0] == '.' {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return nil // removed meanwhile
		}
		entries = append(entries, entry{p, info.Size(), info.ModTime()})
		total += info.Size()
		return nil
	})
	if err != nil {
		return fmt.Errorf("size file store: %w", err)
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].used.Before(entries[j].used) })
	for _, e := range entries {
		if total <= s.budget {
			break
		}
		if e.path == keep {
			continue
		}
		if err := os.Remove(e.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("evict stored file: %w", err)
		}
		total -= e.size
	}
	return nil
}

// Prune deletes the files not used since before (retention.files), and
// returns how many went. A file still named by a message is fetched again
// from where it came if a turn needs it later.
func (s *Store) Prune(before time.Time) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	err := filepath.WalkDir(s.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Base(p)[0] == '.' {
			return err
		}
		info, err := d.Info()
		if err != nil || !info.ModTime().Before(before) {
			return nil // removed meanwhile, or used since
		}
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		n++
		return nil
	})
	if err != nil {
		return n, fmt.Errorf("prune file store: %w", err)
	}
	return n, nil
}

// Delete removes the files of hashes (a person's erasure); a hash not held
// is not an error.
func (s *Store) Delete(hashes ...string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, h := range hashes {
		p, err := s.path(h)
		if err != nil {
			return err
		}
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("delete stored file: %w", err)
		}
	}
	return nil
}
