package skills_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"brain/tools/skills"
	"brain/tools/skills/skillstest"
)

const validPDF = "---\nname: pdf\ndescription: Version one.\n---\nOne.\n"

func TestSync_KeepsLastGoodCopy(t *testing.T) {
	ctx := context.Background()
	repo := skillstest.NewRepo(t)
	good := repo.Commit(map[string]string{"skills/pdf/SKILL.md": validPDF}, "good")
	data := t.TempDir()
	src := skills.Source{Name: "team", Git: repo.URL(), Ref: "main", Path: "skills"}

	commit, probs, err := skills.Sync(ctx, data, src)
	if err != nil || len(probs) > 0 || commit != good {
		t.Fatalf("first sync: %q %v %v (want %s)", commit, probs, err, good)
	}
	if got := src.Fetched(data); got != good {
		t.Fatalf("Fetched = %q, want %q", got, good)
	}
	body := func() string {
		b, err := os.ReadFile(filepath.Join(src.Root(data), "pdf", skills.File))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if body() != validPDF {
		t.Fatalf("checkout has %q", body())
	}

	// An invalid new commit: the problems are returned, the good copy stays.
	bad := repo.Commit(map[string]string{"skills/pdf/SKILL.md": "---\nname: pdf\ndescription: ''\n---\n"}, "bad")
	commit, probs, err = skills.Sync(ctx, data, src)
	if err == nil || commit != "" {
		t.Fatalf("invalid commit synced: %q %v", commit, err)
	}
	if !strings.Contains(err.Error(), "commit "+bad[:12]+" has 1 problems") || !strings.Contains(err.Error(), "kept the last good copy (commit "+good[:12]+")") {
		t.Errorf("error %q", err)
	}
	if len(probs) != 1 || probs[0].Line != 3 || !strings.Contains(probs[0].Message, "description must be a non-empty string") {
		t.Errorf("problems %v", probs)
	}
	if src.Fetched(data) != good || body() != validPDF {
		t.Errorf("good copy replaced: %s %q", src.Fetched(data), body())
	}

	// A failed fetch (the repository is gone): the good copy stays.
	if err := os.RemoveAll(repo.Bare); err != nil {
		t.Fatal(err)
	}
	commit, _, err = skills.Sync(ctx, data, src)
	if err == nil || commit != "" || !strings.Contains(err.Error(), "git clone") || !strings.Contains(err.Error(), "kept the last good copy (commit "+good[:12]+")") {
		t.Errorf("failed fetch: %q %v", commit, err)
	}
	if src.Fetched(data) != good || body() != validPDF {
		t.Errorf("good copy replaced: %s %q", src.Fetched(data), body())
	}

	// Failed attempts leave nothing behind: the current link and its checkout.
	ents, err := os.ReadDir(filepath.Join(data, "skills", "team"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if len(names) != 2 {
		t.Errorf("checkout folder holds %v, want current and one fetch-", names)
	}
}

func TestSync_NewCommitReplacesAndBadRef(t *testing.T) {
	ctx := context.Background()
	repo := skillstest.NewRepo(t)
	first := repo.Commit(map[string]string{"pdf/SKILL.md": validPDF}, "one")
	repo.Tag("v1")
	second := repo.Commit(map[string]string{"pdf/SKILL.md": "---\nname: pdf\ndescription: Version two.\n---\n"}, "two")
	data := t.TempDir()

	// A ref that does not exist, with no earlier copy.
	_, _, err := skills.Sync(ctx, data, skills.Source{Name: "s", Git: repo.URL(), Ref: "nope"})
	if err == nil || !strings.Contains(err.Error(), `ref "nope"`) || !strings.Contains(err.Error(), "there is no earlier copy") {
		t.Errorf("bad ref: %v", err)
	}
	// In this order: the last sync (main) is the copy Load reads below.
	for _, c := range []struct{ ref, want string }{{"v1", first}, {"main", second}} {
		ref, want := c.ref, c.want
		src := skills.Source{Name: "s", Git: repo.URL(), Ref: ref}
		commit, _, err := skills.Sync(ctx, data, src)
		if err != nil || commit != want || src.Fetched(data) != want {
			t.Errorf("ref %s: %q %v, want %s", ref, commit, err, want)
		}
	}
	cat, probs := skills.Load(data, []skills.Source{{Name: "s", Git: repo.URL(), Ref: "main"}})
	if len(probs) > 0 {
		t.Fatal(probs)
	}
	if e, ok := cat.Entry("pdf"); !ok || e.Description != "Version two." {
		t.Errorf("entry %+v", e)
	}
}

func TestSync_RedactsCredentials(t *testing.T) {
	_, _, err := skills.Sync(context.Background(), t.TempDir(), skills.Source{Name: "s", Git: "file://user:s3cret@/nonexistent/repo.git", Ref: "main"})
	if err == nil || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("error %v", err)
	}
	if d := (skills.Source{Git: "https://x-token:s3cret@example.com/r.git", Ref: "v1"}).Describe(); d != "https://example.com/r.git@v1" {
		t.Errorf("Describe = %q", d)
	}
}
