package sandbox

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"regexp"
	"time"
)

var safeID = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// WorkspaceDir is the host directory of a session's /workspace under root
// (Config.Root), whether or not it exists yet.
func WorkspaceDir(root, sessionID string) string {
	return filepath.Join(root, dirName(sessionID), "workspace")
}

// dirName maps a session id to a directory name: the id itself when it is
// plain, else its plain characters and a hash of the whole id, so distinct
// ids never share a workspace.
func dirName(id string) string {
	if safeID.MatchString(id) {
		return id
	}
	clean := []rune{}
	for _, r := range id {
		if len(clean) == 40 {
			break
		}
		if r < 128 && (r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			clean = append(clean, r)
		} else {
			clean = append(clean, '_')
		}
	}
	sum := sha256.Sum256([]byte(id))
	return string(clean) + "-" + hex.EncodeToString(sum[:8])
}

// quote names a command in a message, shortened when long.
func quote(command string) string {
	r := []rune(command)
	if len(r) > 200 {
		return fmt.Sprintf("%q (%d characters)", string(r[:200])+"...", len(r))
	}
	return fmt.Sprintf("%q", command)
}

func since(t time.Time) time.Duration { return time.Since(t).Round(100 * time.Millisecond) }
