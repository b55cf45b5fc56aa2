package linear

import "brain/internal/threadkey"

// Thread is a Linear agent session as brain keys its session:
// "linear:SESSION". The type lives in internal/threadkey, where
// webhooks/linearhook builds the keys it parses.
type Thread = threadkey.Linear

// ParseThread reads a thread key; ok is false for a key of another
// platform.
func ParseThread(key string) (t Thread, ok bool) { return threadkey.ParseLinear(key) }
