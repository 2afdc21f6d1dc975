"""Translate layer: the symbolic translator, its opcode handlers, graph breaks, frame conversion."""
