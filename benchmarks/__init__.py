"""Reproducible benchmarks: the model zoo, NumPy baselines and (later) timing scripts."""
