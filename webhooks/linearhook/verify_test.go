package linearhook

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"
)

// REFERENCE.md's computed vector (Linear publishes none).
const (
	refSecret    = "whsec_test"
	refBody      = `{"action":"created","type":"AgentSessionEvent","webhookTimestamp":1700000000000}`
	refSignature = "af12b48d53d4dd8b0a22e4424f6859279926ad288d67a4fc6178906da259d11b"
)

var refNow = time.Unix(1700000000, 0)

func TestSignature_ReferenceVector(t *testing.T) {
	if got := Signature(refSecret, []byte(refBody)); got != refSignature {
		t.Fatalf("Signature = %s, want %s", got, refSignature)
	}
}

func TestVerify(t *testing.T) {
	body := []byte(refBody)
	tampered := []byte(strings.Replace(refBody, "created", "prompted", 1))
	signed := func(b string) (string, []byte) { return Signature(refSecret, []byte(b)), []byte(b) }
	noTSSig, noTS := signed(`{"action":"created","type":"AgentSessionEvent"}`)
	strTSSig, strTS := signed(`{"webhookTimestamp":"1700000000000"}`)
	badTSSig, badTS := signed(`{"webhookTimestamp":"soon"}`)
	fracSig, frac := signed(`{"webhookTimestamp":1700000000000.5}`)
	notJSONSig, notJSON := signed(`not json`)
	tests := []struct {
		name    string
		secret  string
		sig     string
		body    []byte
		now     time.Time
		wantErr error
	}{
		{"reference vector", refSecret, refSignature, body, refNow, nil},
		{"60s late still fine", refSecret, refSignature, body, refNow.Add(60 * time.Second), nil},
		{"60s early still fine", refSecret, refSignature, body, refNow.Add(-60 * time.Second), nil},
		{"upper-case hex", refSecret, strings.ToUpper(refSignature), body, refNow, nil},
		{"surrounding space", refSecret, " " + refSignature + " ", body, refNow, nil},
		{"fractional timestamp", refSecret, fracSig, frac, refNow, nil},
		{"timestamp as a numeric string", refSecret, strTSSig, strTS, refNow, nil},
		{"stale", refSecret, refSignature, body, refNow.Add(60*time.Second + time.Millisecond), ErrStale},
		{"future", refSecret, refSignature, body, refNow.Add(-60*time.Second - time.Millisecond), ErrStale},
		{"no timestamp", refSecret, noTSSig, noTS, refNow, ErrStale},
		{"garbled timestamp", refSecret, badTSSig, badTS, refNow, ErrStale},
		{"signed non-JSON", refSecret, notJSONSig, notJSON, refNow, ErrStale},
		{"wrong secret", "whsec_other", refSignature, body, refNow, ErrBadSignature},
		{"empty secret", "", refSignature, body, refNow, ErrBadSignature},
		{"tampered body", refSecret, refSignature, tampered, refNow, ErrBadSignature},
		{"no signature", refSecret, "", body, refNow, ErrBadSignature},
		{"sha256= prefix", refSecret, "sha256=" + refSignature, body, refNow, ErrBadSignature},
		{"non-hex signature", refSecret, "zz" + refSignature[2:], body, refNow, ErrBadSignature},
		{"short signature", refSecret, refSignature[:40], body, refNow, ErrBadSignature},
		// A stale body fails even with a good signature, and a bad signature
		// fails before the timestamp is looked at.
		{"stale and forged", refSecret, strings.Repeat("0", 64), body, refNow.Add(time.Hour), ErrBadSignature},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Verify(tt.secret, tt.sig, tt.body, tt.now)
			if tt.wantErr == nil {
				if err != nil {
					t.Fatalf("Verify: %v", err)
				}
				return
			}
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("Verify = %v, want %v", err, tt.wantErr)
			}
		})
	}
}

func TestVerify_FreshSignature(t *testing.T) {
	now := time.UnixMilli(1_712_345_678_901)
	body := []byte(`{"type":"AgentSessionEvent","action":"prompted","webhookTimestamp":` + strconv.FormatInt(now.UnixMilli(), 10) + `}`)
	if err := Verify("s3cret", Signature("s3cret", body), body, now); err != nil {
		t.Fatalf("Verify: %v", err)
	}
}
