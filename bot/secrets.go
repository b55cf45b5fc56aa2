package bot

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"

	"brain/bot/config"
	"brain/internal/keyring"
	"brain/store"
	"brain/tools"
)

// loadSecretsKey reads the key ring of stored credentials: secrets.key_file,
// else the BRAIN_SECRETS_KEY environment variable, else none (nil).
func loadSecretsKey(cfg *config.Config) (*keyring.Ring, error) {
	if f := cfg.SecretsAtRest.KeyFile; f != "" {
		r, err := keyring.LoadFile(f)
		if err != nil {
			return nil, fmt.Errorf("secrets.key_file: %w", err)
		}
		return r, nil
	}
	if v := os.Getenv(config.SecretsKeyEnv); v != "" {
		r, err := keyring.Parse(v)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", config.SecretsKeyEnv, err)
		}
		return r, nil
	}
	return nil, nil
}

// sealStore checks the database's credentials against the configured key
// before anything is written (a database sealed under a key brain was not
// given refuses to start, unchanged), seals credentials left plain from
// before a key was set, and returns the store whose credentials are sealed
// on the way in and opened on the way out.
func sealStore(ctx context.Context, st store.Store, cfg *config.Config, log *slog.Logger) (store.Store, []string, error) {
	ring, err := loadSecretsKey(cfg)
	if err != nil {
		return nil, nil, err
	}
	if err := store.CheckSecrets(ctx, st, ring); err != nil {
		return nil, nil, err
	}
	if ring == nil {
		return store.Sealed(st, nil), []string{"no secrets key (secrets.key_file or " + config.SecretsKeyEnv +
			"): stored credentials (OAuth tokens) are not encrypted; see docs/connections.md"}, nil
	}
	rep, err := store.Reseal(ctx, st, ring)
	if err != nil {
		return nil, nil, err
	}
	if rep.Sealed > 0 {
		log.Info("encrypted stored credentials", tools.LogCount, rep.Sealed)
	}
	return store.Sealed(st, ring), nil, nil
}

// RotateSecrets is brain secrets rotate: with the key file's first key the
// new one and the old ones after it, it re-encrypts every stored
// credential under the new key, each by compare-and-swap, while daemons
// run (they must hold the new key too: docs/connections.md).
func RotateSecrets(ctx context.Context, cfg *config.Config, out io.Writer) error {
	ring, err := loadSecretsKey(cfg)
	if err != nil {
		return err
	}
	if ring == nil {
		return fmt.Errorf("secrets rotate: no key: set secrets.key_file or %s", config.SecretsKeyEnv)
	}
	st, err := openStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer st.Close()
	if err := store.CheckSecrets(ctx, st, ring); err != nil {
		return err
	}
	rep, err := store.Reseal(ctx, st, ring)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "key %s: %d re-encrypted from older keys, %d encrypted from plain text, %d already current, %d changed meanwhile (already current)\n",
		ring.Current(), rep.Rotated, rep.Sealed, rep.Current, rep.Conflict)
	return nil
}

// GenerateSecretsKey is brain secrets keygen: a new random key, as a key
// file line.
func GenerateSecretsKey(out io.Writer) error {
	k, err := keyring.Generate()
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(out, k)
	return err
}
