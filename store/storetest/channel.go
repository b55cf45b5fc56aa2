package storetest

import (
	"context"
	"reflect"
	"testing"
	"time"

	"brain/engine"
	"brain/store"
)

func testDeliveryCursors(t *testing.T, open func() store.Store) {
	ctx := context.Background()
	stores := [2]store.Store{open(), open()}
	st := stores[0]
	cursor := func(origin engine.Origin, session string) int64 {
		t.Helper()
		seq, err := stores[1].DeliveryCursor(ctx, origin, session)
		if err != nil {
			t.Fatalf("DeliveryCursor(%s, %s): %v", origin, session, err)
		}
		return seq
	}
	if got := cursor(engine.OriginSlack, "s1"); got != 0 {
		t.Errorf("cursor before any delivery = %d, want 0", got)
	}
	for _, seq := range []int64{3, 7} {
		if err := st.SetDeliveryCursor(ctx, T0, engine.OriginSlack, "s1", seq); err != nil {
			t.Fatalf("SetDeliveryCursor(%d): %v", seq, err)
		}
	}
	if err := st.SetDeliveryCursor(ctx, T0, engine.OriginLinear, "s1", 2); err != nil {
		t.Fatal(err)
	}
	if got := cursor(engine.OriginSlack, "s1"); got != 7 {
		t.Errorf("slack cursor = %d, want the last one set, 7", got)
	}
	if got := cursor(engine.OriginLinear, "s1"); got != 2 {
		t.Errorf("linear cursor = %d, want 2: cursors are per origin", got)
	}
	if got := cursor(engine.OriginSlack, "s2"); got != 0 {
		t.Errorf("cursor of another session = %d, want 0", got)
	}
}

func testApprovalMessages(t *testing.T, open func() store.Store) {
	ctx := context.Background()
	st := open()
	if ref, ok, err := st.ApprovalMessage(ctx, engine.OriginSlack, "a1"); ok || ref != "" || err != nil {
		t.Fatalf("ApprovalMessage before one is set = %q, %v, %v; want none", ref, ok, err)
	}
	for _, ref := range []string{"1700000000.000100", "1700000000.000200"} {
		if err := st.SetApprovalMessage(ctx, T0, engine.OriginSlack, "a1", ref); err != nil {
			t.Fatalf("SetApprovalMessage(%s): %v", ref, err)
		}
	}
	if ref, ok, err := st.ApprovalMessage(ctx, engine.OriginSlack, "a1"); !ok || ref != "1700000000.000200" || err != nil {
		t.Errorf("ApprovalMessage = %q, %v, %v; want the last ref set", ref, ok, err)
	}
	if _, ok, err := st.ApprovalMessage(ctx, engine.OriginLinear, "a1"); ok || err != nil {
		t.Errorf("ApprovalMessage on another platform = %v, %v; want none", ok, err)
	}
	if _, ok, err := st.ApprovalMessage(ctx, engine.OriginSlack, "a2"); ok || err != nil {
		t.Errorf("ApprovalMessage of another approval = %v, %v; want none", ok, err)
	}
}

func testPostedQuestions(t *testing.T, open func() store.Store) {
	ctx := context.Background()
	st := open()
	get := func(platform engine.Origin, session string) (store.PostedQuestion, bool) {
		t.Helper()
		q, ok, err := st.PostedQuestion(ctx, platform, session)
		if err != nil {
			t.Fatalf("PostedQuestion(%s, %s): %v", platform, session, err)
		}
		return q, ok
	}
	if _, ok := get(engine.OriginSlack, "s1"); ok {
		t.Fatal("PostedQuestion before one is set: ok")
	}
	first := store.PostedQuestion{MessageRef: "1.0", Question: engine.Question{ID: "q0", Text: "Which?"}}
	want := store.PostedQuestion{MessageRef: "1700000000.000300", Question: engine.Question{
		ID: "q1", Text: "Deploy where — \"prod\" or <staging>?",
		Options: []engine.Option{{Label: "Prod", Value: "prod"}, {Label: "Staging", Value: "staging"}},
		CallID:  "call-1", TurnID: "t1", AskedAt: T0.UTC(),
	}}
	for _, q := range []store.PostedQuestion{first, want} {
		if err := st.SetPostedQuestion(ctx, T0, engine.OriginSlack, "s1", q); err != nil {
			t.Fatalf("SetPostedQuestion(%s): %v", q.Question.ID, err)
		}
	}
	if got, ok := get(engine.OriginSlack, "s1"); !ok || !reflect.DeepEqual(got, want) {
		t.Errorf("PostedQuestion = %+v, %v\nwant %+v (the last one set)", got, ok, want)
	}
	if _, ok := get(engine.OriginLinear, "s1"); ok {
		t.Error("PostedQuestion on another platform: ok")
	}
	if err := st.SetPostedQuestion(ctx, T0, engine.OriginSlack, "s2", first); err != nil {
		t.Fatal(err)
	}

	if err := st.ClearPostedQuestion(ctx, engine.OriginSlack, "s1"); err != nil {
		t.Fatalf("ClearPostedQuestion: %v", err)
	}
	if _, ok := get(engine.OriginSlack, "s1"); ok {
		t.Error("PostedQuestion after clearing: ok")
	}
	if got, ok := get(engine.OriginSlack, "s2"); !ok || !reflect.DeepEqual(got, first) {
		t.Errorf("another session's question after clearing s1 = %+v, %v; want it kept", got, ok)
	}
	if err := st.ClearPostedQuestion(ctx, engine.OriginSlack, "s1"); err != nil {
		t.Errorf("clearing twice = %v, want nil", err)
	}
	// A question posted after one was closed is open again.
	if err := st.SetPostedQuestion(ctx, T0.Add(time.Minute), engine.OriginSlack, "s1", first); err != nil {
		t.Fatal(err)
	}
	if got, ok := get(engine.OriginSlack, "s1"); !ok || !reflect.DeepEqual(got, first) {
		t.Errorf("PostedQuestion after a new question = %+v, %v; want %+v", got, ok, first)
	}
}

func testThreadContexts(t *testing.T, open func() store.Store) {
	ctx := context.Background()
	st := open()
	const thread = "slack:T1:C1:1700000000.000400"
	if note, ok, err := st.ThreadContext(ctx, thread); ok || note != "" || err != nil {
		t.Fatalf("ThreadContext before one is set = %q, %v, %v; want none", note, ok, err)
	}
	for _, note := range []string{"first", "The run \"digest\" said:\nall good"} {
		if err := st.SetThreadContext(ctx, T0, thread, note); err != nil {
			t.Fatalf("SetThreadContext: %v", err)
		}
	}
	if note, ok, err := st.ThreadContext(ctx, thread); !ok || note != "The run \"digest\" said:\nall good" || err != nil {
		t.Errorf("ThreadContext = %q, %v, %v; want the last note set", note, ok, err)
	}
	// An empty note still marks the thread as one brain started.
	if err := st.SetThreadContext(ctx, T0, "slack:T1:C1:2.0", ""); err != nil {
		t.Fatal(err)
	}
	if note, ok, err := st.ThreadContext(ctx, "slack:T1:C1:2.0"); !ok || note != "" || err != nil {
		t.Errorf("ThreadContext with an empty note = %q, %v, %v; want marked", note, ok, err)
	}
	if _, ok, err := st.ThreadContext(ctx, "slack:T1:C1:3.0"); ok || err != nil {
		t.Errorf("ThreadContext of another thread = %v, %v; want none", ok, err)
	}
}

func testWorkspaceModes(t *testing.T, open func() store.Store) {
	ctx := context.Background()
	st := open()
	if mode, ok, err := st.WorkspaceMode(ctx, "slack", "T1"); ok || mode != "" || err != nil {
		t.Fatalf("WorkspaceMode before one is set = %q, %v, %v; want none", mode, ok, err)
	}
	for _, mode := range []string{"update", "post"} {
		if err := st.SetWorkspaceMode(ctx, T0, "slack", "T1", mode); err != nil {
			t.Fatalf("SetWorkspaceMode: %v", err)
		}
	}
	if mode, ok, err := st.WorkspaceMode(ctx, "slack", "T1"); !ok || mode != "post" || err != nil {
		t.Errorf("WorkspaceMode = %q, %v, %v; want the last mode set", mode, ok, err)
	}
	for _, other := range [][2]string{{"slack", "T2"}, {"linear", "T1"}} {
		if _, ok, err := st.WorkspaceMode(ctx, engine.Origin(other[0]), other[1]); ok || err != nil {
			t.Errorf("WorkspaceMode(%s, %s) = %v, %v; want none", other[0], other[1], ok, err)
		}
	}
}
