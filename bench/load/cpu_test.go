package main

import (
	"os"
	"os/exec"
	"testing"
	"time"
)

func TestParseProcStat(t *testing.T) {
	// A command name with spaces and a ')' of its own.
	line := "4242 (brain) (x y) S 17 4242 4242 0 -1 4194560 900 0 0 0 250 50 7 3 20 0 9 0 100 2000000 3000 18446744073709551615\n"
	st, err := parseProcStat([]byte(line))
	if err != nil {
		t.Fatal(err)
	}
	want := procStat{ppid: 17, self: 300 * clockTick, reaped: 10 * clockTick}
	if st != want {
		t.Fatalf("got %+v, want %+v", st, want)
	}
	for _, bad := range []string{"", "1 (x S 1", "1 (x) S 1 2 3", "1 (x) S a 1 1 0 -1 0 0 0 0 0 x 0 0 0"} {
		if _, err := parseProcStat([]byte(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// A child that ran and was reaped still counts in its parent's tree.
func TestTreeCPUCountsReapedChildren(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	before := treeCPU(os.Getpid())
	// Busy for at least a few clock ticks of CPU (not of wall time).
	cmd := exec.Command(sh, "-c", `i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done`)
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	child := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	if child < 2*clockTick {
		t.Skipf("the child used only %s of CPU", child)
	}
	got := treeCPU(os.Getpid()) - before
	// /proc counts in clock ticks, rounded per process and per field, so
	// allow a tenth off; without the reaped child the tree would grow by
	// the test's own few milliseconds only.
	if got < child*9/10 {
		t.Fatalf("tree grew by %s, the reaped child used %s", got, child)
	}
	if _, _, total := machineCPU(); total <= 0 || total < time.Second/100 {
		t.Fatalf("machine total CPU %s", total)
	}
}
