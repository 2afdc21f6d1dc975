"""frames package."""
