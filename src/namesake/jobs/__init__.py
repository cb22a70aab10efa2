"""Maintenance jobs: single-runner execution (advisory lock), run records, and the jobs themselves."""
