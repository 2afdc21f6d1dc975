"""Autocast: the per-thread state dispatch reads and the policy of which ops run in which precision."""
