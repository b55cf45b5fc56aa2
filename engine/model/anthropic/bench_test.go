package anthropic

import (
	"testing"

	"brain/engine/model/modeltest"
)

// BenchmarkAnthropic_Generate measures the adapter and the fake together:
// the floor of one model call in the engine benchmark.
func BenchmarkAnthropic_Generate(b *testing.B) { modeltest.Benchmark(b, suite()) }
