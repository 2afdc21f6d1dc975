"""Backends: compile a captured graph into a callable (registry in ``registry``)."""
