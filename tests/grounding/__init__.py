"""Tests of groundeval.grounding."""
