"""Tests of groundeval.state."""
