"""dynamo_lite's differential fuzzer: random programs run eagerly and compiled must agree."""
