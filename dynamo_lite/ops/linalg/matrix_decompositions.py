"""Matrix decompositions as registry ops: ``linalg_svd``, ``linalg_eigh``, ``linalg_qr``, ``linalg_slogdet``,
``linalg_det`` (batched, LAPACK through the array module), with torch's input checks."""
from __future__ import annotations

from ..core import meta_rules as mr
from ..core.registry import register_op

QR_MODES = ("reduced", "complete", "r")


def _check_matrix(name, a, square=False):
    if len(a._sizes) < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    if square and a._sizes[-1] != a._sizes[-2]:
        raise RuntimeError(f"{name}: A must be batches of square matrices, but they are "
                           f"{a._sizes[-2]} by {a._sizes[-1]} matrices")
    if not a._dtype.is_floating_point:
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. Got "
                           f"{mr.TYPE_NAMES[a._dtype]}")


def _meta(a, shape):
    return mr.make_meta(tuple(a._sizes[:-2]) + tuple(shape), a._dtype, None, a._device)


def svd_meta(a, full_matrices=True):
    _check_matrix("linalg.svd", a)
    m, n = a._sizes[-2:]
    k = min(m, n)
    return (_meta(a, (m, m if full_matrices else k)), _meta(a, (k,)), _meta(a, (n if full_matrices else k, n)))


def svd_kernel(xp, a, full_matrices=True, *, out):
    u, s, vh = out
    u[...], s[...], vh[...] = xp.linalg.svd(a, full_matrices=full_matrices)
    return out


def eigh_meta(a, UPLO="L"):
    _check_matrix("linalg.eigh", a, square=True)
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    n = a._sizes[-1]
    return _meta(a, (n,)), _meta(a, (n, n))


def eigh_kernel(xp, a, UPLO="L", *, out):
    values, vectors = out
    values[...], vectors[...] = xp.linalg.eigh(a, UPLO=UPLO)
    return out


def qr_meta(a, mode="reduced"):
    _check_matrix("linalg.qr", a)
    if mode not in QR_MODES:
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of 'reduced' (default), "
                           "'r', or 'complete'")
    m, n = a._sizes[-2:]
    k = min(m, n)
    if mode == "r":
        return mr.make_meta((0,), a._dtype, None, a._device), _meta(a, (k, n))
    return (_meta(a, (m, m)), _meta(a, (m, n))) if mode == "complete" else (_meta(a, (m, k)), _meta(a, (k, n)))


def qr_kernel(xp, a, mode="reduced", *, out):
    q, r = out
    if mode == "r":
        r[...] = xp.linalg.qr(a, mode="r")
    else:
        q[...], r[...] = xp.linalg.qr(a, mode=mode)
    return out


def slogdet_meta(a):
    _check_matrix("linalg.slogdet", a, square=True)
    return _meta(a, ()), _meta(a, ())


def slogdet_kernel(xp, a, *, out):
    sign, logabsdet = out
    sign[...], logabsdet[...] = xp.linalg.slogdet(a)
    return out


def det_meta(a):
    _check_matrix("linalg.det", a, square=True)
    return _meta(a, ())


def det_kernel(xp, a, *, out):
    out[...] = xp.linalg.det(a)
    return out


OPS = {
    "linalg_svd": register_op("linalg_svd", meta=svd_meta, kernel=svd_kernel),
    "linalg_eigh": register_op("linalg_eigh", meta=eigh_meta, kernel=eigh_kernel),
    "linalg_qr": register_op("linalg_qr", meta=qr_meta, kernel=qr_kernel),
    "linalg_slogdet": register_op("linalg_slogdet", meta=slogdet_meta, kernel=slogdet_kernel),
    "linalg_det": register_op("linalg_det", meta=det_meta, kernel=det_kernel),
}

METHODS: dict = {}
