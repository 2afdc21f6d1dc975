"""Backend registry: maps names to ``(graph_module, example_inputs) -> callable`` compilers."""
