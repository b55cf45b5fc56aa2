package skills

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
)

// Hash is the content hash of the skill folder dir: sha256 over each
// file's path relative to dir, size and bytes, in lexical order (symbolic
// links by their target), so any change to the instructions, a script or
// a reference gives a new hash. It reads at most MaxFiles files and
// MaxFolderBytes bytes.
func Hash(dir string) (string, error) {
	h := sha256.New()
	files, total := 0, int64(0)
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		switch {
		case d.IsDir() && d.Name() == ".git":
			return filepath.SkipDir
		case d.IsDir():
			return nil
		case d.Type()&os.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			fmt.Fprintf(h, "L %s\x00%s\x00", filepath.ToSlash(rel), target)
			return nil
		case !d.Type().IsRegular():
			return nil
		}
		if files++; files > MaxFiles {
			return fmt.Errorf("more than %d files", MaxFiles)
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		fi, err := f.Stat()
		if err != nil {
			return err
		}
		if total += fi.Size(); total > MaxFolderBytes {
			return fmt.Errorf("more than %d bytes", MaxFolderBytes)
		}
		fmt.Fprintf(h, "F %s\x00%s\x00", filepath.ToSlash(rel), strconv.FormatInt(fi.Size(), 10))
		_, err = io.CopyN(h, f, fi.Size())
		return err
	})
	if err != nil {
		return "", fmt.Errorf("hash skill %s: %w", dir, err)
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}

// Short is the hash as people read it: the first 12 hex digits.
func Short(hash string) string {
	const prefix = len("sha256:")
	if len(hash) < prefix+12 {
		return hash
	}
	return hash[prefix : prefix+12]
}
