"""Benchmarks: the official-protocol simulator, the natural one, metrics, runner, reports."""
