package linearhook

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"
)

// MaxSkew is how far a delivery's webhookTimestamp may be from now, either
// way (Linear's SDK uses the same minute).
const MaxSkew = 60 * time.Second

// Webhook headers. Linear also sends a linear-timestamp header; it is not
// signed, so it is ignored: the timestamp that counts is webhookTimestamp
// inside the signed body.
const (
	HeaderSignature = "Linear-Signature"
	HeaderDelivery  = "Linear-Delivery"
	HeaderEvent     = "Linear-Event"
)

// Verify errors; Verify wraps one of them with a detail.
var (
	// ErrBadSignature: the signature is missing, garbled or wrong, or no
	// webhook secret is configured.
	ErrBadSignature = errors.New("bad linear signature")
	// ErrStale: the signed body has no usable webhookTimestamp, or it is
	// more than MaxSkew away from now (a replay, or a badly wrong clock).
	ErrStale = errors.New("stale linear webhook")
)

// Verify checks a Linear webhook: signatureHex (the Linear-Signature
// header) must be hex(HMAC-SHA256(secret, body)) over the raw body, compared
// in constant time, and the body's webhookTimestamp (Unix milliseconds) must
// be within MaxSkew of now. The signature is checked first, so the
// timestamp is only read from bytes Linear signed.
func Verify(secret string, signatureHex string, body []byte, now time.Time) error {
	if secret == "" {
		return fmt.Errorf("%w: no webhook secret configured", ErrBadSignature)
	}
	sig := strings.TrimSpace(signatureHex)
	if sig == "" {
		return fmt.Errorf("%w: missing %s", ErrBadSignature, HeaderSignature)
	}
	got, err := hex.DecodeString(sig)
	if err != nil || len(got) != sha256.Size {
		return fmt.Errorf("%w: garbled %s", ErrBadSignature, HeaderSignature)
	}
	if !hmac.Equal(got, mac(secret, body)) {
		return fmt.Errorf("%w: mismatch", ErrBadSignature)
	}
	ms, err := webhookTimestamp(body)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrStale, err)
	}
	skew := float64(now.UnixMilli()) - ms
	if math.Abs(skew) > float64(MaxSkew/time.Millisecond) {
		return fmt.Errorf("%w: webhookTimestamp %.0f is %.0fms from now", ErrStale, ms, skew)
	}
	return nil
}

// Signature returns the Linear-Signature value Linear would send for body:
// hex(HMAC-SHA256(secret, body)). Tests and fake senders sign with it.
func Signature(secret string, body []byte) string {
	return hex.EncodeToString(mac(secret, body))
}

func mac(secret string, body []byte) []byte {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	return m.Sum(nil)
}

// webhookTimestamp reads the top-level webhookTimestamp (milliseconds) of a
// JSON object body. It is a JSON number; Linear's schema types it Float, so
// a fraction is tolerated.
func webhookTimestamp(body []byte) (float64, error) {
	var v struct {
		WebhookTimestamp json.Number `json:"webhookTimestamp"`
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return 0, errors.New("body is not a JSON object with a numeric webhookTimestamp")
	}
	if v.WebhookTimestamp == "" {
		return 0, errors.New("no webhookTimestamp in the body")
	}
	ms, err := v.WebhookTimestamp.Float64()
	if err != nil || math.IsNaN(ms) || math.IsInf(ms, 0) {
		return 0, errors.New("garbled webhookTimestamp")
	}
	return ms, nil
}
