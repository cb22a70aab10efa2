"""Maintenance jobs: single-runner execution (advisory lock), run records, scheduling."""
