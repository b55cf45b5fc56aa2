package bot

import (
	"context"
	"errors"
	"strings"
	"testing"

	"brain/bot/config"
	"brain/bot/connect"
	"brain/tools"
)

// schedulePeople is a tools.People with a service account or none.
type schedulePeople struct{ service string }

func (p schedulePeople) PersonOf(context.Context, tools.Identity) (string, bool, error) {
	return "", false, nil
}

func (p schedulePeople) ServiceAccount(context.Context, string) (string, bool, error) {
	return p.service, p.service != "", nil
}

// A schedule's GitHub call acting as a person goes by the one rule of
// tools.HolderOf: refused without a service account (saying how to mark
// one), else through the service account's connection, never anyone
// else's; a service account whose connection is missing is a plain tool
// error, since a schedule has nobody to send a connect link to.
func TestGitHubUsers_SchedulesUseOnlyTheServiceAccount(t *testing.T) {
	sched := tools.Identity{Surface: tools.SurfaceSchedule, ExternalID: "nightly"}
	st, err := openStore(context.Background(), &config.Config{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	svc := &connect.Service{Store: st, Providers: map[string]connect.Provider{githubProvider: {Name: githubProvider, PerPerson: true}}}

	_, err = githubUsers{connect: svc, people: schedulePeople{}}.UserToken(context.Background(), "github_comment", sched)
	var te *tools.Error
	if !errors.As(err, &te) || !strings.Contains(te.Message, "service-account") {
		t.Fatalf("no service account: %v, want a refusal saying how to mark one", err)
	}
	_, err = githubUsers{connect: svc, people: schedulePeople{service: "ops-bot"}}.UserToken(context.Background(), "github_comment", sched)
	if _, ok := tools.AsConnectionRequired(err); ok || !errors.As(err, &te) || !strings.Contains(te.Message, "service-account connection to github (person ops-bot)") {
		t.Fatalf("service account without a connection: %v, want a plain tool error naming it", err)
	}
}
