"""Parallel scans written as custom ``dl.autograd.Function``s, the way state-space models write them:
forward and backward fill cloned buffers in place through strided views (``X[:, :, s:] += ...``,
``view`` of a stepped slice, ``select``) over log2(T) levels. Each compiles into one forward and
one backward graph with no break, and its gradients equal eager's
(NOTE: [custom autograd.Function in the graph])."""
from __future__ import annotations

import math

import numpy as np

import dynamo_lite as dl

from tests.frames.test_custom_function_graph import _check, _leaves


def _blelloch(A, X):
    """In place: ``X[t] = A[t] * X[t-1] + X[t]`` along dim 2 (length a power of two), by an up-sweep
    and a down-sweep over pairs of a stepped view."""
    B, D, T = X.shape
    levels = int(math.log2(T))
    for d in range(levels):
        s = 2 ** d
        Aa = A[:, :, s - 1::s].view(B, D, T // (2 * s), 2)
        Xa = X[:, :, s - 1::s].view(B, D, T // (2 * s), 2)
        Xa[:, :, :, 1].add_(Aa[:, :, :, 1].mul(Xa[:, :, :, 0]))
        Aa[:, :, :, 1].mul_(Aa[:, :, :, 0])
    for d in range(levels - 2, -1, -1):
        s = 2 ** d
        Aa = A[:, :, s - 1::s].view(B, D, T // (2 * s), 2)
        Xa = X[:, :, s - 1::s].view(B, D, T // (2 * s), 2)
        Xa[:, :, 1:, 0].add_(Aa[:, :, 1:, 0].mul(Xa[:, :, :-1, 1]))
        Aa[:, :, 1:, 0].mul_(Aa[:, :, :-1, 1])


class PScan(dl.autograd.Function):
    """``h[t] = a[t] * h[t-1] + x[t]`` over dim 1 of (B, T, D) inputs, by a Blelloch scan."""

    @staticmethod
    def forward(ctx, A_in, X_in):
        A = A_in.clone().transpose(2, 1)
        X = X_in.clone().transpose(2, 1)
        _blelloch(A, X)
        ctx.save_for_backward(A_in, X)
        return X.transpose(2, 1)

    @staticmethod
    def backward(ctx, grad_output):
        A_in, X = ctx.saved_tensors
        A = A_in.transpose(2, 1)
        A = dl.cat((A[:, :, :1], A[:, :, 1:].flip(2)), dim=2)
        G = grad_output.transpose(2, 1).flip(2)
        _blelloch(A.clone(), G)
        G = G.flip(2)
        Q = dl.zeros_like(X)
        Q[:, :, 1:].add_(X[:, :, :-1] * G[:, :, 1:])
        return Q.transpose(2, 1), G.transpose(2, 1)


class HillisSteele(dl.autograd.Function):
    """The same recurrence over dim 2 of (B, D, T) inputs, by log2(T) shifted in-place updates."""

    @staticmethod
    def forward(ctx, a, x):
        Aa, Xa = a.clone(), x.clone()
        s = 1
        while s < Xa.shape[-1]:
            Xa[:, :, s:] += Aa[:, :, s:] * Xa[:, :, :-s]
            Aa[:, :, s:] = Aa[:, :, s:] * Aa[:, :, :-s]
            s *= 2
        ctx.save_for_backward(a, Xa)
        return Xa

    @staticmethod
    def backward(ctx, grad):
        a, h = ctx.saved_tensors
        Ar = dl.zeros_like(a)
        Ar[:, :, 1:] = a[:, :, 1:].flip(2)
        G = grad.flip(2).clone()
        s = 1
        while s < G.shape[-1]:
            G[:, :, s:] += Ar[:, :, s:] * G[:, :, :-s]
            Ar[:, :, s:] = Ar[:, :, s:] * Ar[:, :, :-s]
            s *= 2
        G = G.flip(2)
        ga = dl.zeros_like(a)
        ga[:, :, 1:] = G[:, :, 1:] * h[:, :, :-1]
        return (ga if ctx.needs_input_grad[0] else None), G


def _sequential(a, x):
    """The recurrence step by step (NumPy), to check the scans themselves."""
    h = np.array(x, copy=True)
    for t in range(1, h.shape[1]):
        h[:, t] += a[:, t] * h[:, t - 1]
    return h


def test_the_scans_compute_the_recurrence():
    a, x = _leaves((2, 16, 3), (2, 16, 3))
    with dl.no_grad():
        got = PScan.apply(dl.sigmoid(a), x).numpy()
        hs = HillisSteele.apply(dl.sigmoid(a).transpose(1, 2), x.transpose(1, 2)).transpose(1, 2).numpy()
    want = _sequential(dl.sigmoid(a).detach().numpy(), x.detach().numpy())
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(hs, want, rtol=1e-5, atol=1e-6)


def test_blelloch_scan_is_one_forward_and_one_backward_graph(backend):
    def block(a, x, w):  # a mamba-style selective scan step: discretised A, input projection, scan
        deltaA = dl.exp(-dl.nn.functional.softplus(a))
        h = PScan.apply(deltaA, x @ w)
        return (h * h).mean()

    _check(block, [(2, 16, 4), (2, 16, 4), (4, 4)], backend)


def test_hillis_steele_scan_is_one_forward_and_one_backward_graph(backend):
    def model(a, x):
        return HillisSteele.apply(dl.sigmoid(a), dl.tanh(x)).pow(2).sum()

    _check(model, [(2, 3, 8), (2, 3, 8)], backend)


def test_scan_gradient_of_a_constant_coefficient(backend):
    def model(x):  # the coefficient needs no gradient: backward sees needs_input_grad == (False, True)
        a = dl.full((1, 2, 8), 0.5)
        return HillisSteele.apply(a, x * 2).sum()

    _check(model, [(1, 2, 8)], backend)
