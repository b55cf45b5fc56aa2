// Command load is brain's load script: it builds brain, starts real
// `brain serve` processes (on SQLite, or as replicas on one PostgreSQL),
// drives them over HTTP and prints each number beside its floor or peer
// from the same run. It is run by hand, never by the tests:
//
//	go run ./bench/load turns     # turns/s against the fake model server, 1-3 replicas
//	go run ./bench/load intake    # signed Slack intake: floor, Bolt, brain on each store
//	go run ./bench/load startup   # start-to-ready and memory with 100,000 sessions
//	go run ./bench/load memory    # memory per running turn, 10,000 turns waiting on a slow model
//	go run ./bench/load all
//
// See the README's "Load scripts" for what each measures and the flags.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
)

const usage = `usage: go run ./bench/load [flags] turns|intake|startup|memory|all

flags:
`

type options struct {
	stores      []string
	sessions    int
	rounds      int
	latency     time.Duration
	concurrency []int
	replicas    []int
	duration    time.Duration
	clients     int
	idle        int
	bolt        string
	keep        bool
	brain       string
	statements  int
	// intake: the limit and model latency the mentions' turns run with.
	intakeRunning int
	intakeLatency time.Duration
	intakeKinds   []string
	// memory: running turns held at once.
	memTurns int
}

func main() {
	// The floor server runs as a process of its own (this binary), as the
	// other intake targets do.
	// So does the fake model server of the turns, to count its CPU apart.
	if len(os.Args) > 1 && (os.Args[1] == floorMode || os.Args[1] == durableFloorMode || os.Args[1] == modelMode) {
		serve := serveFloor
		switch os.Args[1] {
		case modelMode:
			serve = serveModel
		case durableFloorMode:
			serve = serveDurableFloor
		}
		if err := serve(os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, os.Args[1]+":", err)
			os.Exit(1)
		}
		return
	}
	var o options
	stores := flag.String("stores", "sqlite,postgres", "stores to measure")
	flag.IntVar(&o.sessions, "sessions", 1000, "turns: sessions, one turn each")
	flag.IntVar(&o.rounds, "rounds", 3, "turns: tool rounds per turn")
	flag.DurationVar(&o.latency, "latency", 50*time.Millisecond, "turns: fake model latency per call")
	conc := flag.String("concurrency", "16,64,256", "turns: limits.max_running_turns values to try")
	reps := flag.String("replicas", "1,2,3", "turns: PostgreSQL replica counts")
	flag.DurationVar(&o.duration, "duration", 10*time.Second, "intake: load per target")
	flag.IntVar(&o.clients, "clients", 64, "intake: concurrent keep-alive connections")
	flag.IntVar(&o.intakeRunning, "intake-running", 64, "intake: limits.max_running_turns of brain while mentions start sessions")
	flag.DurationVar(&o.intakeLatency, "intake-latency", time.Second, "intake: fake model latency per call of the mentions' turns (a real model's seconds)")
	kinds := flag.String("kinds", kindMention+","+kindMessage, "intake: kinds of traffic to measure (mention, message)")
	flag.IntVar(&o.memTurns, "running-turns", 10000, "memory: sessions with a turn waiting on the model at once")
	flag.IntVar(&o.idle, "idle-sessions", 100000, "startup: sessions in the database")
	flag.StringVar(&o.bolt, "bolt", "bench/bolt", "intake: directory of the Bolt app (npm ci --prefix bench/bolt)")
	flag.BoolVar(&o.keep, "keep", false, "keep the work directory")
	flag.StringVar(&o.brain, "brain", "", "brain binary to measure (default: go build ./cmd/brain), e.g. another commit's build")
	flag.IntVar(&o.statements, "pg-statements", 0, "turns: print PostgreSQL's N most frequent statements per run, in calls per turn")
	flag.Usage = func() { fmt.Fprint(os.Stderr, usage); flag.PrintDefaults() }
	flag.Parse()
	if flag.NArg() != 1 {
		flag.Usage()
		os.Exit(2)
	}
	var err error
	o.stores = strings.Split(*stores, ",")
	o.intakeKinds = strings.Split(*kinds, ",")
	if o.concurrency, err = ints(*conc); err == nil {
		o.replicas, err = ints(*reps)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "load:", err)
		os.Exit(2)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, flag.Arg(0), o); err != nil {
		fmt.Fprintln(os.Stderr, "load:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, mode string, o options) error {
	env, err := newEnv(ctx, o.keep, o.brain, o.statements > 0)
	if err != nil {
		return err
	}
	defer env.close()
	fmt.Printf("machine: %d cores (GOMAXPROCS %d), %s, %s/%s\n", runtime.NumCPU(), runtime.GOMAXPROCS(0), cpuModel(), runtime.GOOS, runtime.GOARCH)
	modes := []string{mode}
	if mode == "all" {
		modes = []string{"turns", "intake", "startup", "memory"}
	}
	for _, m := range modes {
		switch m {
		case "turns":
			err = runTurns(ctx, env, o)
		case "intake":
			err = runIntake(ctx, env, o)
		case "startup":
			err = runStartup(ctx, env, o)
		case "memory":
			err = runMemory(ctx, env, o)
		default:
			return fmt.Errorf("unknown mode %q (want turns, intake, startup, memory or all)", m)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", m, err)
		}
	}
	return nil
}

func ints(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%q: want positive integers separated by commas", s)
		}
		out = append(out, n)
	}
	return out, nil
}

func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "unknown CPU"
	}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown CPU"
}
