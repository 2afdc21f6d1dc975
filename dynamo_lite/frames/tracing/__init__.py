"""Tracing layer: sources, guards, proxies, variables, side effects and the output graph."""
