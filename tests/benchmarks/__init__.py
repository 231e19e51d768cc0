"""Tests of groundeval.benchmarks."""
