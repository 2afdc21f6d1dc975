"""Ops that make tensors: factories, copies and conversions, tensors over existing memory, type queries."""
