package openai

import (
	"testing"

	"brain/engine/model/modeltest"
)

// BenchmarkOpenAI_Generate measures the adapter and the fake together:
// the floor of one model call in the engine benchmark.
func BenchmarkOpenAI_Generate(b *testing.B) { modeltest.Benchmark(b, suite()) }
