package sandbox

import (
	"context"
	"crypto/rand"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"brain/internal/gittest"
)

// BenchmarkCodingTask_ColdVsCached: one coding task in a sandbox in
// network mode proxy, first cold (empty repository and module caches),
// then in a second session of the same agent with both caches filled by
// the first: clone a generated module-sized repository (200 commits of
// history, 6 MB of incompressible test data, four packages) through the
// egress proxy with a brokered token, download its one dependency from a
// Go module proxy on the network, and `go test ./...` (each session's
// build cache starts empty). Reports each step's seconds, cold and cached:
//
//	go test -run '^$' -bench CodingTask -benchtime 1x ./tools/sandbox/
func BenchmarkCodingTask_ColdVsCached(b *testing.B) {
	goBin := "/usr/local/go/bin/go"
	if _, err := os.Stat(goBin); err != nil {
		b.Skip("no Go toolchain under /usr/local/go")
	}
	hostIP := nonLoopback(b)
	git := gittest.New(b, "ghs_read_bench", "ghs_write_bench_0123456789")
	makeRepo(b, git)
	// The module proxy listens on a non-loopback address: inside the
	// sandbox, loopback is the sandbox's own.
	proxyDir := b.TempDir()
	writeProxy(b, proxyDir)
	l, err := net.Listen("tcp", hostIP+":0")
	if err != nil {
		b.Skipf("no address to serve the module proxy on: %v", err)
	}
	mods := &http.Server{Handler: http.FileServer(http.Dir(proxyDir))}
	go func() { _ = mods.Serve(l) }()
	b.Cleanup(func() { _ = mods.Close() })
	gitAddr := strings.TrimPrefix(git.URL, "http://")
	for b.Loop() {
		root := b.TempDir()
		cfg := Config{Root: filepath.Join(root, "sandboxes"), ModCacheRoot: filepath.Join(root, "gomod"), ModCacheBytes: 1 << 30,
			Egress: &Egress{Allow: []string{l.Addr().String()}, PrivateOK: []string{gitAddr, l.Addr().String()}, GitHosts: map[string]string{"github.test": git.URL},
				Credentials: &repoTokens{allowed: "acme/big", token: git.ReadToken}, MirrorRoot: filepath.Join(root, "git"), MirrorBytes: 1 << 30}}
		s, err := New(cfg)
		if err != nil {
			b.Fatal(err)
		}
		script := "set -e; export GOTOOLCHAIN=local GOSUMDB=off GOFLAGS=-mod=mod GOPROXY=file:///cache/gomod,http://" + l.Addr().String() + "; " +
			"t0=$(date +%s.%N); git clone -q https://github.test/acme/big.git; t1=$(date +%s.%N); cd big; " +
			goBin + " mod download; t2=$(date +%s.%N); " + goBin + " test ./... >/dev/null; t3=$(date +%s.%N); " +
			"echo $t0 $t1 $t2 $t3"
		for _, round := range []string{"cold", "cached"} {
			r, err := callTool(context.Background(), b, s, "bench-"+round, map[string]any{"command": script, "timeoutSeconds": 1200})
			if err != nil || r.ExitCode != 0 {
				b.Fatalf("%s: %v %+v", round, err, r)
			}
			var ts [4]float64
			for i, f := range strings.Fields(r.Stdout) {
				if i < 4 {
					ts[i], _ = strconv.ParseFloat(f, 64)
				}
			}
			b.ReportMetric(ts[1]-ts[0], round+"-clone-s")
			b.ReportMetric(ts[2]-ts[1], round+"-moddownload-s")
			b.ReportMetric(ts[3]-ts[2], round+"-gotest-s")
			b.ReportMetric(ts[3]-ts[0], round+"-total-s")
		}
		s.Close()
	}
}

// makeRepo creates acme/big: four packages that use example.com/dep,
// 200 commits, and 6 MB of random test data in six versions.
func makeRepo(b *testing.B, git *gittest.Server) {
	b.Helper()
	files := map[string]string{"go.mod": "module example.com/big\n\ngo 1.21\n\nrequire example.com/dep v1.0.0\n"}
	for i := range 4 {
		p := fmt.Sprintf("pkg%d", i)
		files[p+"/"+p+".go"] = fmt.Sprintf("package %s\n\nimport (\n\t\"strings\"\n\n\t\"example.com/dep\"\n)\n\nfunc F(s string) string { return strings.Repeat(s, dep.Two()) }\n", p)
		files[p+"/"+p+"_test.go"] = fmt.Sprintf("package %s\n\nimport \"testing\"\n\nfunc TestF(t *testing.T) {\n\tif F(\"a\") != \"aa\" {\n\t\tt.Fatal(F(\"a\"))\n\t}\n}\n", p)
	}
	git.Create(b, "acme/big", files)
	work := b.TempDir()
	gittest.Git(b, work, "clone", "-q", filepath.Join(git.Root, "acme/big.git"), "w")
	dir := filepath.Join(work, "w")
	for i := range 200 {
		if i%40 == 0 {
			blob := make([]byte, 1<<20)
			_, _ = rand.Read(blob)
			if err := os.WriteFile(filepath.Join(dir, "testdata.bin"), blob, 0o644); err != nil {
				b.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(dir, "HISTORY"), []byte(strconv.Itoa(i)), 0o644); err != nil {
			b.Fatal(err)
		}
		gittest.Git(b, dir, "add", "-A")
		gittest.Git(b, dir, "commit", "-qm", "change "+strconv.Itoa(i))
	}
	gittest.Git(b, dir, "push", "-q", "origin", "main")
}

// nonLoopback is an IPv4 address of this host that is not loopback.
func nonLoopback(b *testing.B) string {
	b.Helper()
	addrs, _ := net.InterfaceAddrs()
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && !n.IP.IsLoopback() {
			return n.IP.String()
		}
	}
	b.Skip("no non-loopback IPv4 address")
	return ""
}
