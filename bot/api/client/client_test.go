package client

import "testing"

func TestDaemonURL(t *testing.T) {
	for _, c := range []struct{ listen, want string }{
		{"127.0.0.1:8080", "http://127.0.0.1:8080"},
		{":8080", "http://127.0.0.1:8080"},
		{"0.0.0.0:9000", "http://127.0.0.1:9000"},
		{"[::]:9000", "http://[::1]:9000"},
		{"brain.internal:80", "http://brain.internal:80"},
	} {
		if got, err := daemonURL(c.listen); err != nil || got != c.want {
			t.Errorf("daemonURL(%q) = %q, %v; want %q", c.listen, got, err, c.want)
		}
	}
	if _, err := daemonURL("no-port"); err == nil {
		t.Error("daemonURL accepted an address without a port")
	}
}
