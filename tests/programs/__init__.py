"""Tests of groundeval.programs."""
