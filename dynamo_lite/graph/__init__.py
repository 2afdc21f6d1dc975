"""graph package."""
