package bot

import (
	"context"
	"crypto/ed25519"
	"io"
	"os"
	"time"

	"brain/bot/audit"
	"brain/bot/config"
)

// AuditReport is what brain audit verify found, named here so cmd/brain
// needs only bot.
type AuditReport = audit.Report

// AuditExport writes the audit entries with a time in [from, to) (zero:
// no bound) to w as JSON Lines, straight from the database: it works
// whether or not brain serve runs.
func AuditExport(ctx context.Context, cfg *config.Config, w io.Writer, from, to time.Time) (int, error) {
	st, err := openStore(ctx, cfg)
	if err != nil {
		return 0, err
	}
	defer st.Close()
	return audit.Export(ctx, st, w, from, to)
}

// AuditVerify checks the audit trail offline: the export at file when it
// is set, else the configured database (cfg may then not be nil). Seals
// are checked against the public key at pubKey, else the public half of
// audit.signing_key_file; with neither, only the hash chain is checked.
func AuditVerify(ctx context.Context, cfg *config.Config, file, pubKey string) (AuditReport, error) {
	var keys []ed25519.PublicKey
	switch {
	case pubKey != "":
		k, err := audit.LoadPublicKey(pubKey)
		if err != nil {
			return AuditReport{}, err
		}
		keys = append(keys, k)
	case cfg != nil && cfg.Audit.SigningKeyFile != "":
		k, err := audit.LoadPublicKey(cfg.Audit.SigningKeyFile)
		if err != nil {
			return AuditReport{}, err
		}
		keys = append(keys, k)
	}
	if file != "" {
		f, err := os.Open(file)
		if err != nil {
			return AuditReport{}, err
		}
		defer f.Close()
		return audit.VerifyExport(f, keys...)
	}
	st, err := openStore(ctx, cfg)
	if err != nil {
		return AuditReport{}, err
	}
	defer st.Close()
	return audit.VerifyStore(ctx, st, keys...)
}
