package linediff

import (
	"strings"
	"testing"
)

func TestDiff(t *testing.T) {
	for _, tt := range []struct{ a, b, want string }{
		{"", "x\ny", "+x\n+y"},
		{"a\nb\nc", "a\nB\nc", "-b\n+B"},
		{"a\nc", "a\nb\nc", "+b"},
		{"a\nb", "", "-a\n-b"},
		{"same", "same", ""},
	} {
		if got := Of(tt.a, tt.b); got != tt.want {
			t.Errorf("Of(%q, %q) = %q, want %q", tt.a, tt.b, got, tt.want)
		}
	}
	if got := Of("", strings.Repeat("é", 5000)); len(got) > Max+40 || !strings.HasSuffix(got, "(diff cut at 4 KiB)") {
		t.Errorf("a long diff is %d bytes: ...%q", len(got), got[len(got)-30:])
	}
}
