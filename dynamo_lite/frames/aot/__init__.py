"""Compiled training: joint forward-backward graphs, partitioning, one grad_fn per compiled graph."""
