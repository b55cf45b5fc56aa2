package githubhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// Webhook headers.
const (
	HeaderSignature = "X-Hub-Signature-256"
	HeaderDelivery  = "X-GitHub-Delivery"
	HeaderEvent     = "X-GitHub-Event"
)

// ErrBadSignature: the signature is missing, garbled or wrong, or no
// webhook secret is configured.
var ErrBadSignature = errors.New("bad github signature")

// Verify checks an X-Hub-Signature-256 header: "sha256=" and the hex
// HMAC-SHA256 of the raw body under the webhook secret, compared in
// constant time.
func Verify(secret, header string, body []byte) error {
	if secret == "" {
		return fmt.Errorf("%w: no webhook secret configured", ErrBadSignature)
	}
	hexSig, ok := strings.CutPrefix(strings.TrimSpace(header), "sha256=")
	if !ok {
		return fmt.Errorf("%w: missing or garbled %s", ErrBadSignature, HeaderSignature)
	}
	if len(hexSig) != 2*sha256.Size {
		return fmt.Errorf("%w: garbled %s", ErrBadSignature, HeaderSignature)
	}
	// GitHub sends lower-case hex: the header is compared as that text, in
	// constant time, so exactly one spelling of the right MAC is accepted.
	if !hmac.Equal([]byte(hexSig), []byte(hex.EncodeToString(mac(secret, body)))) {
		return fmt.Errorf("%w: mismatch", ErrBadSignature)
	}
	return nil
}

// Signature is the X-Hub-Signature-256 value GitHub sends for body; tests
// and fake senders sign with it.
func Signature(secret string, body []byte) string {
	return "sha256=" + hex.EncodeToString(mac(secret, body))
}

func mac(secret string, body []byte) []byte {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	return m.Sum(nil)
}
