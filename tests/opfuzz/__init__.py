"""A differential fuzzer of the compiled backends against eager, over random tensor programs."""
