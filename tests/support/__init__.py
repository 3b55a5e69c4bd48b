"""Test helpers importable from any test module (tests/ is on pytest's pythonpath)."""
