package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// clockTick is the unit of /proc's CPU times: USER_HZ, 100 on every Linux
// architecture Go runs on (the kernel scales its own HZ to it).
const clockTick = 10 * time.Millisecond

// procStat is the part of /proc/PID/stat the load script reads.
type procStat struct {
	ppid int
	// self is the CPU time (user + system) of the process's threads, and
	// reaped the time of its children that it waited for.
	self, reaped time.Duration
}

// readProcStat reads /proc/PID/stat.
func readProcStat(pid int) (procStat, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return procStat{}, err
	}
	st, err := parseProcStat(b)
	if err != nil {
		return procStat{}, fmt.Errorf("/proc/%d/stat: %w", pid, err)
	}
	return st, nil
}

// parseProcStat parses a /proc/PID/stat line. The command name (field 2)
// may hold spaces and parentheses, so fields are counted from its last ')'.
func parseProcStat(b []byte) (procStat, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return procStat{}, errors.New("no command name")
	}
	// After ')': state(3) ppid(4) ... utime(14) stime(15) cutime(16) cstime(17).
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 15 {
		return procStat{}, fmt.Errorf("%d fields", len(f))
	}
	n := make([]int64, 5)
	for j, idx := range []int{1, 11, 12, 13, 14} {
		var err error
		if n[j], err = strconv.ParseInt(f[idx], 10, 64); err != nil {
			return procStat{}, err
		}
	}
	return procStat{
		ppid:   int(n[0]),
		self:   time.Duration(n[1]+n[2]) * clockTick,
		reaped: time.Duration(n[3]+n[4]) * clockTick,
	}, nil
}

// processCPU is the CPU time of one process's own threads (not its
// children: the load script's own children are the processes it measures
// apart).
func processCPU(pid int) time.Duration {
	st, err := readProcStat(pid)
	if err != nil {
		return 0 // exited: measured as nothing
	}
	return st.self
}

// treeCPU is the CPU time of a process and every descendant, alive or
// exited: each live process's own time plus the time of the children it
// reaped (a child that exits moves its time to its parent's reaped total,
// so the sum does not jump when a PostgreSQL backend ends).
func treeCPU(root int) time.Duration {
	all := map[int]procStat{}
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		pid, err := strconv.Atoi(filepath.Base(d))
		if err != nil {
			continue
		}
		if st, err := readProcStat(pid); err == nil {
			all[pid] = st
		}
	}
	in := func(pid int) bool {
		for p := pid; p > 1; p = all[p].ppid {
			if p == root {
				return true
			}
			if _, ok := all[p]; !ok {
				return false
			}
		}
		return false
	}
	var total time.Duration
	for pid, st := range all {
		if in(pid) {
			total += st.self + st.reaped
		}
	}
	return total
}

// machineCPU is the whole machine's busy, stolen and total CPU time so
// far (the first line of /proc/stat, every core): busy counts everything
// but idle and iowait, so other work on the machine shows up too; steal is
// the part of it the hypervisor gave to other virtual machines.
func machineCPU() (busy, steal, total time.Duration) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0, 0
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return 0, 0, 0
	}
	for i, s := range f[1:] {
		if i >= 8 { // guest times are already counted in user
			break
		}
		n, _ := strconv.ParseInt(s, 10, 64)
		total += time.Duration(n) * clockTick
		if i != 3 && i != 4 { // idle, iowait
			busy += time.Duration(n) * clockTick
		}
		if i == 7 {
			steal = time.Duration(n) * clockTick
		}
	}
	return busy, steal, total
}

// cpuSample is the CPU time of each side of a turns run at one moment.
type cpuSample struct {
	replicas []time.Duration
	pg       time.Duration
	model    time.Duration
	// driver is this process: the load generator and the tool server.
	driver                     time.Duration
	machine, steal, machineAll time.Duration
}

// cpuSides names the processes a sample reads: the brain replicas, the
// PostgreSQL postmaster (0 on SQLite) and the fake model server.
type cpuSides struct {
	replicas []int
	pg       int
	model    int
}

func (s cpuSides) sample() cpuSample {
	var c cpuSample
	for _, pid := range s.replicas {
		c.replicas = append(c.replicas, treeCPU(pid))
	}
	if s.pg != 0 {
		c.pg = treeCPU(s.pg)
	}
	c.model = treeCPU(s.model)
	c.driver = processCPU(os.Getpid())
	c.machine, c.steal, c.machineAll = machineCPU()
	return c
}

// cpuUse is the CPU a run took on each side, from two samples.
type cpuUse struct {
	replicas                   []time.Duration
	brain, pg, model           time.Duration
	driver                     time.Duration
	machine, steal, machineAll time.Duration
}

func (s cpuSample) since(before cpuSample) cpuUse {
	u := cpuUse{
		pg:         s.pg - before.pg,
		model:      s.model - before.model,
		driver:     s.driver - before.driver,
		machine:    s.machine - before.machine,
		steal:      s.steal - before.steal,
		machineAll: s.machineAll - before.machineAll,
	}
	for i := range s.replicas {
		d := s.replicas[i] - before.replicas[i]
		u.replicas = append(u.replicas, d)
		u.brain += d
	}
	return u
}

// total is the CPU of every process of the run.
func (u cpuUse) total() time.Duration { return u.brain + u.pg + u.model + u.driver }

// utilisation is the run's processes' CPU over what the machine's cores
// offered in wall time.
func (u cpuUse) utilisation(wall time.Duration, cores int) float64 {
	return u.total().Seconds() / (wall.Seconds() * float64(cores))
}

// busy is the whole machine's utilisation over the run, other work
// included, and the part of it stolen by the hypervisor.
func (u cpuUse) busy() (busy, steal float64) {
	if u.machineAll == 0 {
		return 0, 0
	}
	return u.machine.Seconds() / u.machineAll.Seconds(), u.steal.Seconds() / u.machineAll.Seconds()
}

// perTurn is d per turn, in milliseconds.
func perTurn(d time.Duration, turns int) float64 {
	return float64(d.Microseconds()) / 1000 / float64(turns)
}
