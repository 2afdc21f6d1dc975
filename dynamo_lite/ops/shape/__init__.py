"""Views, indexing, scatter/gather, joins, splits, rearrangements and data-dependent selection."""
