package gitrepo

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// Services of git's smart HTTP protocol.
const (
	UploadPack  = "git-upload-pack"  // fetch
	ReceivePack = "git-receive-pack" // push
)

// ZeroID is the old value of a ref a push creates.
const ZeroID = "0000000000000000000000000000000000000000"

// ErrUnknownOutcome marks a push whose request left but whose answer did
// not arrive (or made no sense): the ref may or may not have been created.
var ErrUnknownOutcome = errors.New("the push was sent but its answer was lost")

// maxAdvert bounds a ref advertisement (a repository with many refs).
const maxAdvert = 32 << 20

// Remote is one repository of a git host spoken to over smart HTTP.
type Remote struct {
	// URL is the repository's URL, e.g. https://github.com/acme/widgets.git.
	URL string
	// User and Password are sent as basic auth (GitHub: any user name,
	// a token as password).
	User, Password string
	// Client sends the requests; it must not follow redirects of a push.
	Client *http.Client
}

// Refs returns the refs the remote advertises to service (name -> id).
// ReceivePack needs write access, UploadPack only read access.
func (r Remote) Refs(ctx context.Context, service string) (map[string]string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(r.URL, "/")+"/info/refs?service="+service, nil)
	if err != nil {
		return nil, err
	}
	req.SetBasicAuth(r.User, r.Password)
	req.Header.Set("User-Agent", "git/brain")
	resp, err := r.Client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("list the refs: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("list the refs: the git host answered %s", resp.Status)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/x-"+service+"-advertisement" {
		return nil, fmt.Errorf("list the refs: the git host does not speak smart HTTP (content type %q)", ct)
	}
	pkts, err := readPkts(io.LimitReader(resp.Body, maxAdvert), 2)
	if err != nil {
		return nil, fmt.Errorf("list the refs: %w", err)
	}
	refs := map[string]string{}
	for i, p := range pkts {
		if i == 0 && strings.HasPrefix(p, "# service=") {
			continue
		}
		p, _, _ = strings.Cut(strings.TrimSuffix(p, "\n"), "\x00")
		id, name, ok := strings.Cut(p, " ")
		if !ok || !IsCommitID(id) || name == "capabilities^{}" {
			continue
		}
		refs[name] = id
	}
	return refs, nil
}

// Create pushes pack and creates ref at id; it fails if ref exists (the
// old value sent is zero, so the host updates nothing that is there).
// Failures after the request left wrap ErrUnknownOutcome.
func (r Remote) Create(ctx context.Context, ref, id string, pack []byte) error {
	var body bytes.Buffer
	body.WriteString(pkt(ZeroID + " " + id + " " + ref + "\x00report-status agent=brain\n"))
	body.WriteString("0000")
	body.Write(pack)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(r.URL, "/")+"/"+ReceivePack, &body)
	if err != nil {
		return err
	}
	req.GetBody = nil // never replayed by net/http
	req.SetBasicAuth(r.User, r.Password)
	req.Header.Set("Content-Type", "application/x-git-receive-pack-request")
	req.Header.Set("Accept", "application/x-git-receive-pack-result")
	req.Header.Set("User-Agent", "git/brain")
	resp, err := r.Client.Do(req)
	if err != nil {
		return fmt.Errorf("push %s: %w: %v", ref, ErrUnknownOutcome, err)
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode >= 500:
		return fmt.Errorf("push %s: %w: the git host answered %s", ref, ErrUnknownOutcome, resp.Status)
	case resp.StatusCode != http.StatusOK:
		return fmt.Errorf("push %s: the git host refused it: %s", ref, resp.Status)
	}
	pkts, err := readPkts(io.LimitReader(resp.Body, 1<<20), 1)
	if err != nil {
		return fmt.Errorf("push %s: %w: %v", ref, ErrUnknownOutcome, err)
	}
	unpacked, updated := false, false
	for _, p := range pkts {
		p = strings.TrimSuffix(p, "\n")
		switch {
		case p == "unpack ok":
			unpacked = true
		case strings.HasPrefix(p, "unpack "):
			return fmt.Errorf("push %s: the git host could not unpack it: %s", ref, strings.TrimPrefix(p, "unpack "))
		case p == "ok "+ref:
			updated = true
		case strings.HasPrefix(p, "ng "+ref+" "):
			return fmt.Errorf("push %s: the git host refused it: %s", ref, strings.TrimPrefix(p, "ng "+ref+" "))
		}
	}
	if !unpacked || !updated {
		return fmt.Errorf("push %s: %w: the git host's report says neither ok nor refused", ref, ErrUnknownOutcome)
	}
	return nil
}

func pkt(s string) string { return fmt.Sprintf("%04x%s", len(s)+4, s) }

// readPkts reads pkt-lines until the flushes-th flush packet (or the end).
func readPkts(r io.Reader, flushes int) ([]string, error) {
	br := bufio.NewReader(r)
	var out []string
	for {
		var head [4]byte
		if _, err := io.ReadFull(br, head[:]); err != nil {
			if errors.Is(err, io.EOF) && len(out) > 0 {
				return out, nil
			}
			return nil, fmt.Errorf("read a pkt-line: %w", err)
		}
		n, err := strconv.ParseUint(string(head[:]), 16, 16)
		if err != nil {
			return nil, fmt.Errorf("bad pkt-line length %q", head)
		}
		if n == 0 {
			if flushes--; flushes == 0 {
				return out, nil
			}
			continue
		}
		if n < 4 {
			return nil, fmt.Errorf("bad pkt-line length %d", n)
		}
		data := make([]byte, n-4)
		if _, err := io.ReadFull(br, data); err != nil {
			return nil, fmt.Errorf("read a pkt-line: %w", err)
		}
		out = append(out, string(data))
	}
}
