"""Linear algebra: the matmul family, contractions (einsum), products, solves and decompositions."""
