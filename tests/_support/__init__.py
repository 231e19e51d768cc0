"""Test support shared by every test package: paths, fixtures, fake judge servers."""
