package slackhook

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Seed corpora live in testdata/fuzz/<target>/ and run with every go test.

func FuzzParseEvent(f *testing.F) {
	f.Fuzz(func(t *testing.T, body []byte, bot string) {
		res, err := ParseEvent(body, bot)
		if err != nil {
			if res.Item != nil || res.Challenge != "" {
				t.Fatalf("error %v with a result %+v", err, res)
			}
			return
		}
		if res.Item != nil && res.Challenge != "" {
			t.Fatalf("both an item and a challenge: %+v", res)
		}
		if res.Item == nil {
			if res.Challenge == "" && res.Ignored == "" {
				t.Fatal("nothing returned and no reason given")
			}
			return
		}
		checkWellFormed(t, *res.Item)
		if res.Item.Kind() == KindHome || res.Item.Agent() != nil {
			return // Home and agent events: checkWellFormed is all there is to check
		}
		m := res.Item.Message()
		if bot != "" && m.User == bot {
			t.Fatalf("accepted the bot's own message: %+v", m)
		}
		if res.Item.DedupeKeys[len(res.Item.DedupeKeys)-1] != "msg:"+m.Channel+":"+m.TS {
			t.Fatalf("no msg key: %v", res.Item.DedupeKeys)
		}
	})
}

func FuzzParseInteraction(f *testing.F) {
	f.Fuzz(func(t *testing.T, body []byte) {
		// The form-encoded body, and the same bytes as a bare JSON payload
		// (the Socket Mode shape), so JSON seeds need no form encoding.
		items, err := ParseInteraction(body)
		more, err2 := parseInteractionPayload(body)
		if err == nil {
			items = append(items, more...)
		} else if err2 == nil {
			items = more
		}
		for _, it := range items {
			checkWellFormed(t, it)
			if it.Kind() != KindSubmission && (len(it.DedupeKeys) != 1 || !strings.HasPrefix(it.DedupeKeys[0], "action:")) {
				t.Fatalf("bad action keys %v", it.DedupeKeys)
			}
		}
	})
}

func FuzzVerify(f *testing.F) {
	f.Fuzz(func(t *testing.T, secret, ts, sig string, body []byte, now int64) {
		at := time.Unix(now, 0)
		h := http.Header{}
		h.Set(HeaderTimestamp, ts)
		h.Set(HeaderSignature, sig)
		if err := Verify(secret, h, body, at); err == nil {
			// Accepted: the signature must really be the MAC, and fresh.
			if secret == "" || !strings.EqualFold(sig, Signature(secret, ts, body)) {
				t.Fatalf("accepted a bad signature %q", sig)
			}
			sec, perr := strconv.ParseInt(ts, 10, 64)
			if perr != nil || sec-now > 300 || now-sec > 300 {
				t.Fatalf("accepted timestamp %q at %d", ts, now)
			}
		}
		// A request signed now with the right secret is always accepted.
		if secret != "" && now >= 0 && now < 1e12 {
			fresh := strconv.FormatInt(now, 10)
			h.Set(HeaderTimestamp, fresh)
			h.Set(HeaderSignature, Signature(secret, fresh, body))
			if err := Verify(secret, h, body, at); err != nil {
				t.Fatalf("rejected a good signature: %v", err)
			}
		}
	})
}
