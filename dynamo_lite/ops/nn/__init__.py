"""Neural-network ops: convolution, pooling, layer norm, embeddings, dropout, resampling and their adjoints."""
