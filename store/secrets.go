package store

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"brain/internal/keyring"
)

// Credentials at rest. Every column listed in SecretColumns holds a value
// sealed by internal/keyring when a key is configured, bound to where it
// is stored (SecretValue.Context), so a copy of the database reveals no
// credential. The drivers store and compare these values as opaque text;
// sealing happens in the views below (SealedLinearTokens,
// SealedConnections), which the wiring hands to whatever reads or writes
// credentials. CheckSecrets runs at start-up before anything is written;
// Reseal seals plain values left from before a key was set and re-seals
// values of older keys (brain secrets rotate).

// SecretColumn is one column of credentials, in a table whose rows Key
// names.
type SecretColumn struct {
	Table, Key, Column string
}

// SecretColumns lists every stored credential. A driver adding a table of
// credentials adds it here, and the dump test finds it if not.
var SecretColumns = []SecretColumn{
	{"linear_tokens", "organization_id", "access_token"},
	{"linear_tokens", "organization_id", "refresh_token"},
	{"connections", "id", "access_token"},
	{"connections", "id", "refresh_token"},
	{"oauth_clients", "issuer", "client_secret"},
	{"connect_flows", "state", "verifier"},
}

// SecretValue is one stored credential: its column, its row and the value
// as stored (sealed or, from before a key was set, plain).
type SecretValue struct {
	SecretColumn
	Row    string
	Stored string
}

// Context is what the value is sealed to: its table, column and row.
func (v SecretValue) Context() string { return sealContext(v.Table, v.Column, v.Row) }

func sealContext(table, column, row string) string { return table + "." + column + ":" + row }

// Secrets is the store's view of its credentials as opaque values, for
// the start-up check and re-sealing.
type Secrets interface {
	// SecretValues returns every non-empty value of SecretColumns.
	SecretValues(ctx context.Context) ([]SecretValue, error)
	// ReplaceSecret writes next in v's place if it still holds v.Stored;
	// swapped is false (nothing written) when it changed meanwhile.
	ReplaceSecret(ctx context.Context, v SecretValue, next string) (swapped bool, err error)
}

// ErrSecretsKey is the start-up refusal: the database holds credentials
// sealed under a key brain was not given.
var ErrSecretsKey = errors.New("secrets key")

// CheckSecrets refuses, before anything is written, a database holding
// credentials sealed under a key ring lacks (ring nil: no key configured).
// The error says which key ids are missing and where the key is set.
func CheckSecrets(ctx context.Context, s Secrets, ring *keyring.Ring) error {
	vals, err := s.SecretValues(ctx)
	if err != nil {
		return fmt.Errorf("check stored credentials: %w", err)
	}
	missing := map[string]int{}
	for _, v := range vals {
		id, _, sealed, err := keyring.Split(v.Stored)
		if err != nil {
			return fmt.Errorf("check stored credentials: %s: %w", v.Context(), err)
		}
		if sealed && !ring.Has(id) {
			missing[id]++
		}
	}
	if len(missing) == 0 {
		return nil
	}
	ids := make([]string, 0, len(missing))
	for id := range missing {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	if ring == nil {
		return fmt.Errorf("%w: the database holds credentials encrypted under key %s, and no key is configured: set secrets.key_file (or BRAIN_SECRETS_KEY) to the key file they were written with; nothing was changed",
			ErrSecretsKey, strings.Join(ids, ", "))
	}
	return fmt.Errorf("%w: the database holds credentials encrypted under key %s, which the configured keys (%s) do not include: use the key file they were written with (keep older keys after the current one); nothing was changed",
		ErrSecretsKey, strings.Join(ids, ", "), strings.Join(ring.IDs(), ", "))
}

// ResealReport counts what Reseal did.
type ResealReport struct {
	Sealed   int // plain values sealed
	Rotated  int // values re-sealed from an older key to the current one
	Current  int // values already under the current key
	Conflict int // values changed by someone else meanwhile (they are current)
}

// Reseal seals every plain credential and re-seals every one under an
// older key with ring's current key, each by compare-and-swap, so it runs
// beside live daemons: a value they changed meanwhile is left to them
// (they write under their current key). ring must not be nil.
func Reseal(ctx context.Context, s Secrets, ring *keyring.Ring) (ResealReport, error) {
	var rep ResealReport
	if ring == nil {
		return rep, fmt.Errorf("%w: reseal needs a key (secrets.key_file or BRAIN_SECRETS_KEY)", ErrSecretsKey)
	}
	vals, err := s.SecretValues(ctx)
	if err != nil {
		return rep, fmt.Errorf("reseal credentials: %w", err)
	}
	for _, v := range vals {
		id, _, sealed, err := keyring.Split(v.Stored)
		if err != nil {
			return rep, fmt.Errorf("reseal %s: %w", v.Context(), err)
		}
		if sealed && id == ring.Current() {
			rep.Current++
			continue
		}
		plain, err := ring.Open(v.Context(), v.Stored)
		if err != nil {
			return rep, fmt.Errorf("reseal: %w", err)
		}
		next, err := ring.Seal(v.Context(), plain)
		if err != nil {
			return rep, fmt.Errorf("reseal %s: %w", v.Context(), err)
		}
		ok, err := s.ReplaceSecret(ctx, v, next)
		switch {
		case err != nil:
			return rep, fmt.Errorf("reseal %s: %w", v.Context(), err)
		case !ok:
			rep.Conflict++
		case sealed:
			rep.Rotated++
		default:
			rep.Sealed++
		}
	}
	return rep, nil
}

// IsSecretColumn reports whether c is one of SecretColumns (a driver
// checks before building SQL from it).
func IsSecretColumn(c SecretColumn) bool {
	for _, k := range SecretColumns {
		if k == c {
			return true
		}
	}
	return false
}
