"""Benchmarks for trace import: run with `python -m tests.bench`; pytest never collects them.

Each bench_*.py module has a `run()` that prints its figures next to a baseline
measured in the same run. Nothing here asserts anything about time.
"""
