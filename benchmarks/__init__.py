"""groundeval.benchmarks."""
