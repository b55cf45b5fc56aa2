package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"brain/internal/egress"
)

// HelperCommand is the first argument that makes brain's binary act as the
// sandbox helper (HelperMain) instead of brain.
const HelperCommand = "sandbox-helper"

// Paths inside a sandbox in proxy mode.
const (
	helperPath = "/run/brain/helper"           // brain's binary, read-only
	socketPath = "/run/brain/egress.sock"      // the session's proxy
	proxyAddr  = "127.0.0.1:3128"              // the forwarder, in the sandbox's own loopback
	proxyURL   = "http://" + proxyAddr         // what http_proxy and git's http.proxy say
	gitconfig  = "/etc/gitconfig"              // the system git config brain writes
	helperName = "brain sandbox helper"        // how its messages start
	helperExit = 125                           // its own failures, as env(1) does
	maxCredOut = 8 << 10                       // an answer from the proxy, at most
	credWait   = 30 * time.Second              // a credential request, at most
	dialWait   = 10 * time.Second              // a connection to the proxy socket, at most
	forwardCmd = "forward"                     // HelperMain's subcommands
	credCmd    = "git-credential"              //
	helperArgs = HelperCommand + " " + credCmd // git's credential.helper, after helperPath
)

// HelperMain runs inside a sandbox, as brain's own binary started with
// HelperCommand (cmd/brain hands it the arguments after it) and returns the
// exit code:
//
//	forward -- CMD...    listens on 127.0.0.1:3128 in the sandbox's network
//	                     namespace, relays every connection to the proxy's
//	                     socket, runs CMD and exits with its status
//	git-credential get   git's credential helper: asks the proxy for a grant
//	                     for the repository git names on stdin
//
// It needs nothing from brain but the socket, and holds no secret.
func HelperMain(args []string) int {
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, helperName+": no subcommand")
		return helperExit
	}
	switch args[0] {
	case forwardCmd:
		if len(args) < 3 || args[1] != "--" {
			fmt.Fprintln(os.Stderr, helperName+": usage: forward -- CMD...")
			return helperExit
		}
		return forward(args[2:])
	case credCmd:
		if len(args) < 2 || args[1] != "get" {
			return 0 // store and erase: grants are not kept
		}
		return credential(os.Stdin, os.Stdout, os.Stderr)
	}
	fmt.Fprintf(os.Stderr, "%s: unknown subcommand %q\n", helperName, args[0])
	return helperExit
}

func forward(argv []string) int {
	l, err := net.Listen("tcp", proxyAddr)
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: cannot listen on %s for the egress proxy: %v\n", helperName, proxyAddr, err)
		return helperExit
	}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go relay(c)
		}
	}()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", helperName, err)
		return helperExit
	}
	// Signals for the command reach it too (it shares the process group).
	signal.Ignore(syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	err = cmd.Wait()
	l.Close()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return ee.ExitCode()
	}
	fmt.Fprintf(os.Stderr, "%s: %v\n", helperName, err)
	return helperExit
}

func relay(c net.Conn) {
	defer c.Close()
	up, err := net.DialTimeout("unix", socketPath, dialWait)
	if err != nil {
		return
	}
	defer up.Close()
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(up, c); closeWrite(up); done <- struct{}{} }()
	go func() { _, _ = io.Copy(c, up); closeWrite(c); done <- struct{}{} }()
	<-done
	<-done
}

func closeWrite(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
	}
}

// credential relays git's description to the proxy and prints its answer;
// a refusal goes to stderr, which git shows, and git then fails without
// credentials.
func credential(stdin io.Reader, stdout, stderr io.Writer) int {
	desc, err := io.ReadAll(io.LimitReader(stdin, maxCredOut))
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", helperName, err)
		return helperExit
	}
	client := &http.Client{
		Timeout: credWait,
		Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			d := net.Dialer{Timeout: dialWait}
			return d.DialContext(ctx, "unix", socketPath)
		}},
	}
	resp, err := client.Post("http://egress"+egress.CredentialPath, "text/plain", strings.NewReader(string(desc)))
	if err != nil {
		fmt.Fprintf(stderr, "%s: the egress proxy did not answer: %v\n", helperName, err)
		return helperExit
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxCredOut))
	if resp.StatusCode != http.StatusOK {
		fmt.Fprintf(stderr, "%s\n", strings.TrimSpace(string(body)))
		return 0 // git goes on without credentials and reports the failure
	}
	_, _ = stdout.Write(body)
	return 0
}
