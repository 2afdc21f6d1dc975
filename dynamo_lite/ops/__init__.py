"""The op registry: each op declared once (meta rule + kernel)."""
