package openai

import (
	"testing"

	"brain/engine"
	"brain/engine/model/fakemodel"
)

// BenchmarkOpenAI_Generate measures the adapter and the fake together:
// the floor of one model call in the engine benchmark.
func BenchmarkOpenAI_Generate(b *testing.B) {
	srv := fakemodel.New(fakemodel.WithRecordLimit(0))
	defer srv.Close()
	srv.SetDefault(fakemodel.TextAndTools("hello", fakemodel.Call{Name: "t", Input: `{"x":1}`}))
	m, err := New(Config{BaseURL: srv.OpenAIBaseURL(), APIKey: "k", Model: "m"})
	if err != nil {
		b.Fatal(err)
	}
	req := engine.ModelRequest{Messages: []engine.Message{{Role: engine.RoleUser, Text: "hi"}}}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := m.Generate(b.Context(), req); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
