"""variables package."""
