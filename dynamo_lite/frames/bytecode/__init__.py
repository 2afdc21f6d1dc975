"""Bytecode layer: version tables, instruction indexing, liveness, emission, resume functions."""
