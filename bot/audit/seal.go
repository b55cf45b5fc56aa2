package audit

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"time"

	"brain/internal/startstop"
	"brain/store"
	"brain/tools"
)

// Seal is the detail of an audit.sealed entry: a signature over the hash
// of entry Seq, by the key KeyID names. A seal is itself an entry of the
// chain, so removing or changing one breaks the chain too.
type Seal struct {
	Seq   int64  `json:"seq"`
	Hash  string `json:"hash"`
	KeyID string `json:"key_id"`
	Sig   string `json:"sig"` // base64 Ed25519 signature of SealMessage
}

// SealMessage is what a seal signs: a fixed prefix, the entry's seq and
// its hash.
func SealMessage(seq int64, hash string) []byte {
	return []byte("brain audit seal\n" + strconv.FormatInt(seq, 10) + "\n" + hash)
}

// KeyID names a public key: the first 8 bytes of its SHA-256, in hex.
func KeyID(pub ed25519.PublicKey) string {
	sum := sha256.Sum256(pub)
	return hex.EncodeToString(sum[:8])
}

// LoadPrivateKey reads an Ed25519 private key in PKCS#8 PEM.
func LoadPrivateKey(path string) (ed25519.PrivateKey, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("audit signing key: %w", err)
	}
	blk, _ := pem.Decode(b)
	if blk == nil {
		return nil, fmt.Errorf("audit signing key %s: not PEM", path)
	}
	k, err := x509.ParsePKCS8PrivateKey(blk.Bytes)
	if err != nil {
		return nil, fmt.Errorf("audit signing key %s: %w", path, err)
	}
	priv, ok := k.(ed25519.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("audit signing key %s: not an Ed25519 key", path)
	}
	return priv, nil
}

// LoadPublicKey reads an Ed25519 public key: PKIX PEM ("PUBLIC KEY"), or
// a private key's PEM, whose public half it takes.
func LoadPublicKey(path string) (ed25519.PublicKey, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("audit public key: %w", err)
	}
	blk, _ := pem.Decode(b)
	if blk == nil {
		return nil, fmt.Errorf("audit public key %s: not PEM", path)
	}
	if blk.Type == "PRIVATE KEY" {
		priv, err := LoadPrivateKey(path)
		if err != nil {
			return nil, err
		}
		return priv.Public().(ed25519.PublicKey), nil
	}
	k, err := x509.ParsePKIXPublicKey(blk.Bytes)
	if err != nil {
		return nil, fmt.Errorf("audit public key %s: %w", path, err)
	}
	pub, ok := k.(ed25519.PublicKey)
	if !ok {
		return nil, fmt.Errorf("audit public key %s: not an Ed25519 key", path)
	}
	return pub, nil
}

// SealHead signs the chain's newest entry, unless it is already a seal
// (nothing happened since). It returns the seal entry, or the zero entry
// when there was nothing to seal.
func SealHead(ctx context.Context, st store.Audit, key ed25519.PrivateKey, now time.Time) (store.AuditEntry, error) {
	head, err := st.AuditHead(ctx)
	if err != nil {
		return store.AuditEntry{}, fmt.Errorf("seal audit: %w", err)
	}
	if head.Seq == 0 || head.Action == ActionSealed {
		return store.AuditEntry{}, nil
	}
	pub := key.Public().(ed25519.PublicKey)
	s := Seal{Seq: head.Seq, Hash: head.Hash, KeyID: KeyID(pub),
		Sig: base64.StdEncoding.EncodeToString(ed25519.Sign(key, SealMessage(head.Seq, head.Hash)))}
	detail, err := json.Marshal(s)
	if err != nil {
		return store.AuditEntry{}, err
	}
	es, err := st.AppendAudit(ctx, store.AuditRecord{At: now, Actor: "brain", Action: ActionSealed, Target: "audit", Detail: detail})
	if err != nil {
		return store.AuditEntry{}, fmt.Errorf("seal audit: %w", err)
	}
	return es[0], nil
}

// Sealer seals the head every Every while it runs, and once more when it
// stops. Several replicas may each run one: a seal that finds a seal at
// the head does nothing.
type Sealer struct {
	startstop.Lifecycle
	Store store.Audit
	Key   ed25519.PrivateKey
	Every time.Duration
	Now   func() time.Time
	Log   *slog.Logger
}

// Start begins sealing.
func (s *Sealer) Start(ctx context.Context) error {
	if s.Key == nil {
		return errors.New("audit sealer: no key")
	}
	return s.Lifecycle.Start(ctx, func(context.Context) error {
		s.Go(s.run)
		return nil
	})
}

// Stop stops sealing, sealing what was appended since the last seal.
func (s *Sealer) Stop(ctx context.Context) error {
	return s.Lifecycle.Stop(ctx, nil)
}

func (s *Sealer) run(ctx context.Context) {
	t := time.NewTicker(s.Every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			s.seal(context.WithoutCancel(ctx))
			return
		case <-t.C:
			s.seal(ctx)
		}
	}
}

func (s *Sealer) seal(ctx context.Context) {
	if _, err := SealHead(ctx, s.Store, s.Key, s.Now()); err != nil && s.Log != nil {
		s.Log.Error("seal audit trail", tools.LogErr, err)
	}
}
