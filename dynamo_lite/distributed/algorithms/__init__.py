"""Algorithms on top of the collectives: DDP communication hooks."""
