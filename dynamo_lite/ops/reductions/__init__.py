"""Reductions and scans: sum/mean/var, softmax-like normalizations, cumulative ops, order statistics, sorting."""
