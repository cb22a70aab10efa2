"""Benchmarks and the fitting of the shipped models; run from the repository root as `python -m bench.…`."""
