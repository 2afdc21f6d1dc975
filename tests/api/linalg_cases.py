"""dl.linalg decomposition cases, written once against the torch API (``lib`` is torch or dynamo_lite).

Each case: (name, fn(lib, *inputs) -> tuple of tensors, input specs). Decompositions are not
unique (the sign of each singular/eigen vector, of each Q column and R row), so a case
returns quantities that are: singular values, |U|, |Vh|, reconstructions, projectors.
Input specs: a shape (standard normal), or ("sym", n) / ("rankdef", m, n, r) / ("negdet", n).
"""

ABS = abs


def _svd(lib, a):
    U, S, Vh = lib.linalg.svd(a, full_matrices=False)
    return S, U.abs(), Vh.abs(), (U * S.unsqueeze(-2)) @ Vh


def _svd_full(lib, a):
    U, S, Vh = lib.linalg.svd(a)
    return S, U.shape[-1] * lib.ones(1, dtype=a.dtype), Vh.shape[-2] * lib.ones(1, dtype=a.dtype), \
        U.transpose(-2, -1) @ U, Vh @ Vh.transpose(-2, -1)


def _eigh(lib, a, uplo="L"):
    values, vectors = lib.linalg.eigh(a, UPLO=uplo)
    return values, vectors.abs(), (vectors * values.unsqueeze(-2)) @ vectors.transpose(-2, -1)


def _qr(lib, a, mode="reduced"):
    Q, R = lib.linalg.qr(a, mode=mode)
    if mode == "r":
        return Q.shape[0] * lib.ones(1, dtype=a.dtype), R.abs()
    return Q.abs(), R.abs(), Q @ R


def _legacy_svd(lib, a):
    U, S, V = lib.svd(a)
    return S, U.abs(), V.abs()


CASES = [
    ("svd_tall", _svd, [(5, 3)]),
    ("svd_wide_batched", _svd, [(2, 3, 4)]),
    ("svd_full_matrices", _svd_full, [(4, 2)]),
    ("svdvals", lambda lib, a: (lib.linalg.svdvals(a),), [(3, 3, 2)]),
    ("eigh", _eigh, [("sym", 4)]),
    ("eigh_upper_batched", lambda lib, a: _eigh(lib, a, "U"), [(2, 3, 3)]),
    ("eigvalsh", lambda lib, a: (lib.linalg.eigvalsh(a),), [("sym", 3)]),
    ("qr_reduced", _qr, [(5, 3)]),
    ("qr_complete_wide", lambda lib, a: _qr(lib, a, "complete"), [(3, 4)]),
    ("qr_r", lambda lib, a: _qr(lib, a, "r"), [(4, 3)]),
    ("det_batched", lambda lib, a: (lib.linalg.det(a),), [(3, 4, 4)]),
    ("slogdet_negative", lambda lib, a: tuple(lib.linalg.slogdet(a))[::-1], [("negdet", 3)]),
    ("pinv_rank_deficient", lambda lib, a: (lib.linalg.pinv(a),), [("rankdef", 4, 3, 2)]),
    ("pinv_atol", lambda lib, a: (lib.linalg.pinv(a, atol=0.5),), [(3, 3)]),
    ("matrix_rank", lambda lib, a: (lib.linalg.matrix_rank(a),), [("rankdef", 5, 4, 2)]),
    ("lstsq", lambda lib, a, b: (lib.linalg.lstsq(a, b).solution,), [(5, 3), (5, 2)]),
    ("matrix_norm_nuc", lambda lib, a: (lib.linalg.matrix_norm(a, "nuc"),), [(2, 3, 4)]),
    ("matrix_norm_2_dims_keepdim", lambda lib, a: (lib.linalg.matrix_norm(a, 2, dim=(0, 2), keepdim=True),),
     [(3, 2, 4)]),
    ("matrix_norm_minus_2", lambda lib, a: (lib.linalg.matrix_norm(a, -2),), [(4, 3)]),
    ("norm_nuc", lambda lib, a: (lib.linalg.norm(a, "nuc"),), [(3, 3)]),
    ("legacy_svd", _legacy_svd, [(4, 3)]),
    ("top_level_det_slogdet_logdet", lambda lib, a: (lib.det(a), *lib.slogdet(a), lib.logdet(a)), [("negdet", 3)]),
    ("pinverse", lambda lib, a: (lib.pinverse(a),), [(3, 5)]),
]

#: Cases whose first output's gradient (of ``(output * cotangent).sum()``) is compared with torch's.
GRAD_CASES = ["svdvals", "eigvalsh", "det_batched", "slogdet_negative", "pinv_atol", "matrix_norm_nuc",
              "matrix_norm_minus_2", "svd_tall", "eigh", "qr_reduced"]

#: (name, fn(lib, input), input spec): torch raises (type and message recorded).
ERROR_CASES = [
    ("det_not_square", lambda lib, a: lib.linalg.det(a), (2, 3)),
    ("svd_one_dim", lambda lib, a: lib.linalg.svd(a), (3,)),
    ("eigh_bad_uplo", lambda lib, a: lib.linalg.eigh(a, UPLO="X"), (2, 2)),
    ("qr_bad_mode", lambda lib, a: lib.linalg.qr(a, mode="full"), (2, 2)),
    ("svd_integer", lambda lib, a: lib.linalg.svd(a.long()), (2, 2)),
    ("matrix_norm_bad_ord", lambda lib, a: lib.linalg.matrix_norm(a, 3), (2, 2)),
]


def make_input(np, rng, spec):
    """A float64 array for an input spec (see the module docstring)."""
    if spec[0] == "sym":
        a = rng.standard_normal((spec[1], spec[1]))
        return a + a.T
    if spec[0] == "rankdef":
        _, m, n, r = spec
        return rng.standard_normal((m, r)) @ rng.standard_normal((r, n))
    if spec[0] == "negdet":
        a = rng.standard_normal((spec[1], spec[1]))
        return a if np.linalg.det(a) < 0 else a[::-1].copy()
    return rng.standard_normal(spec)


def cotangent(np, shape):
    return np.cos(np.arange(int(np.prod(shape)), dtype=np.float64) + 0.5).reshape(shape)
