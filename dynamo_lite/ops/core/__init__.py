"""The registry's machinery: Op and REGISTRY, eager dispatch, meta-rule helpers, kernel helpers, dl.* API, Tensor methods."""
