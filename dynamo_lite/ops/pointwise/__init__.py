"""Elementwise ops: arithmetic, unary math and activations, comparisons, special and complex functions."""
