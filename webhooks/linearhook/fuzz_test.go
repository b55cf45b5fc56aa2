package linearhook

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

// Seed corpora live in testdata/fuzz/<target>/ and run with every go test.

func FuzzParseEvent(f *testing.F) {
	f.Fuzz(func(t *testing.T, body []byte) {
		it, ignored, err := ParseEvent(body)
		switch {
		case err != nil:
			if ignored != "" || !reflect.DeepEqual(it, Item{}) {
				t.Fatalf("error %v with ignored %q item %+v", err, ignored, it)
			}
		case ignored != "":
			if !reflect.DeepEqual(it, Item{}) {
				t.Fatalf("ignored %q with item %+v", ignored, it)
			}
		default:
			checkWellFormed(t, it)
			if it.DeliveryID != it.EventKey {
				t.Fatalf("delivery %q != event key %q", it.DeliveryID, it.EventKey)
			}
			if it.Text != strings.TrimSpace(it.Text) {
				t.Fatalf("untrimmed text %q", it.Text)
			}
		}
	})
}

func FuzzVerify(f *testing.F) {
	f.Fuzz(func(t *testing.T, secret, sig string, body []byte, nowMs int64) {
		now := time.UnixMilli(nowMs)
		if err := Verify(secret, sig, body, now); err == nil {
			// Accepted: the signature must really be the MAC, and fresh.
			if secret == "" || !strings.EqualFold(strings.TrimSpace(sig), Signature(secret, body)) {
				t.Fatalf("accepted a bad signature %q", sig)
			}
			ms, terr := webhookTimestamp(body)
			nm := float64(now.UnixMilli())
			if terr != nil || ms-nm > 60000 || nm-ms > 60000 {
				t.Fatalf("accepted timestamp of %q at %d", body, nowMs)
			}
		}
		// A body stamped now and signed with the right secret is accepted.
		if secret != "" && nowMs >= 0 && nowMs < 1<<50 {
			fresh := msBody(now)
			if err := Verify(secret, Signature(secret, fresh), fresh, now); err != nil {
				t.Fatalf("rejected a good signature: %v", err)
			}
		}
	})
}
