"""Random ops: the random factories (rand, randn, ...) and sampling (multinomial, normal, in-place fills)."""
