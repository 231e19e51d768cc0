"""Tests of groundeval.judges."""
