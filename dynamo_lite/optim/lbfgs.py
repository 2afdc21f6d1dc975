"""L-BFGS: a quasi-Newton optimizer driven by a closure, with an optional strong-Wolfe line search.

The parameters are treated as one flat vector. Each iteration builds a search direction from
the last ``history_size`` (step, gradient change) pairs by the two-loop recursion, then moves
along it by a fixed step (``lr``; the very first step is scaled by the gradient's size) or by
the step a strong-Wolfe line search (cubic interpolation, bracketing and zoom) accepts.
"""
from __future__ import annotations

import math

from ..autograd.grad_mode import enable_grad, no_grad
from ..ops.core import api as ops
from ..tensor.tensor import Tensor
from .optimizer import Optimizer

LINE_SEARCHES = (None, "strong_wolfe")


def _cubic_minimum(x1, f1, g1, x2, f2, g2, bounds=None) -> float:
    """The minimizer of the cubic through two points with slopes, kept within ``bounds`` (the midpoint
    when the cubic has no minimum)."""
    low, high = bounds if bounds is not None else (min(x1, x2), max(x1, x2))
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1 * d1 - g1 * g2
    if d2_square < 0:
        return (low + high) / 2.0
    d2 = math.sqrt(d2_square)
    if x1 <= x2:
        position = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
    else:
        position = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
    return min(max(position, low), high)


class _Bracket:
    """Two trial steps with their losses, gradients and directional derivatives (the line search's interval)."""

    def __init__(self, steps, losses, grads, slopes):
        self.steps, self.losses, self.grads, self.slopes = steps, losses, grads, slopes

    def low_high(self) -> tuple:
        return (0, 1) if self.losses[0] <= self.losses[-1] else (1, 0)

    def set(self, i, step, loss, grad, slope) -> None:
        self.steps[i], self.losses[i], self.grads[i], self.slopes[i] = step, loss, grad, slope


def _strong_wolfe(evaluate, t, d, loss, grad, slope, c1=1e-4, c2=0.9, tolerance_change=1e-9, max_ls=25):
    """A step ``t`` along ``d`` meeting the strong Wolfe conditions; returns (loss, grad, t, evaluations)."""
    d_norm = float(d.abs().max())
    new_loss, new_grad = evaluate(t)
    evaluations, new_slope = 1, float(new_grad.dot(d))
    t_prev, loss_prev, grad_prev, slope_prev = 0.0, loss, grad.clone(), slope
    done, ls_iter, bracket = False, 0, None
    while ls_iter < max_ls:
        sufficient_decrease = new_loss <= loss + c1 * t * slope and not (ls_iter > 1 and new_loss >= loss_prev)
        if sufficient_decrease and abs(new_slope) <= -c2 * slope:
            bracket, done = _Bracket([t], [new_loss], [new_grad], [new_slope]), True
            break
        if not sufficient_decrease or new_slope >= 0:  # a minimum lies between the last two trials
            bracket = _Bracket([t_prev, t], [loss_prev, new_loss], [grad_prev, new_grad.clone()],
                               [slope_prev, new_slope])
            break
        previous = t
        t = _cubic_minimum(t_prev, loss_prev, slope_prev, t, new_loss, new_slope,
                           bounds=(t + 0.01 * (t - t_prev), t * 10))
        t_prev, loss_prev, grad_prev, slope_prev = previous, new_loss, new_grad.clone(), new_slope
        new_loss, new_grad = evaluate(t)
        evaluations, new_slope, ls_iter = evaluations + 1, float(new_grad.dot(d)), ls_iter + 1
    if ls_iter == max_ls:
        bracket = _Bracket([0.0, t], [loss, new_loss], [grad, new_grad], [slope, new_slope])
    insufficient_progress = False
    low, high = bracket.low_high()
    while not done and ls_iter < max_ls:
        steps = bracket.steps
        if abs(steps[1] - steps[0]) * d_norm < tolerance_change:
            break
        t = _cubic_minimum(steps[0], bracket.losses[0], bracket.slopes[0], steps[1], bracket.losses[1],
                           bracket.slopes[1])
        margin = 0.1 * (max(steps) - min(steps))
        if min(max(steps) - t, t - min(steps)) < margin:  # too close to an end: move inside, unless it helps
            if insufficient_progress or t >= max(steps) or t <= min(steps):
                t = max(steps) - margin if abs(t - max(steps)) < abs(t - min(steps)) else min(steps) + margin
                insufficient_progress = False
            else:
                insufficient_progress = True
        else:
            insufficient_progress = False
        new_loss, new_grad = evaluate(t)
        evaluations, new_slope, ls_iter = evaluations + 1, float(new_grad.dot(d)), ls_iter + 1
        if new_loss > loss + c1 * t * slope or new_loss >= bracket.losses[low]:
            bracket.set(high, t, new_loss, new_grad.clone(), new_slope)
            low, high = bracket.low_high()
        else:
            if abs(new_slope) <= -c2 * slope:
                done = True
            elif new_slope * (steps[high] - steps[low]) >= 0:
                bracket.set(high, steps[low], bracket.losses[low], bracket.grads[low], bracket.slopes[low])
            bracket.set(low, t, new_loss, new_grad.clone(), new_slope)
    return bracket.losses[low], bracket.grads[low], bracket.steps[low], evaluations


class LBFGS(Optimizer):
    """L-BFGS over all parameters as one vector; ``step(closure)`` runs up to ``max_iter`` iterations.

    Args:
        params: the parameters (one group only).
        lr: the step length (scales the line search's first trial).
        max_iter: iterations per ``step``.
        max_eval: closure evaluations per ``step`` (default ``max_iter * 5 // 4``).
        tolerance_grad: stop when the largest gradient entry is at most this.
        tolerance_change: stop when the step or the loss changes by less.
        history_size: the number of (step, gradient change) pairs kept.
        line_search_fn: None (a fixed step) or "strong_wolfe".

    Example:
        >>> opt = dl.optim.LBFGS([w], line_search_fn="strong_wolfe")
        >>> def closure():
        ...     opt.zero_grad(); loss = ((w - 3) ** 2).sum(); loss.backward(); return loss
        >>> opt.step(closure)
    """

    def __init__(self, params, lr=1, max_iter=20, max_eval=None, tolerance_grad=1e-7, tolerance_change=1e-9,
                 history_size=100, line_search_fn=None):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if line_search_fn not in LINE_SEARCHES:
            raise RuntimeError("only 'strong_wolfe' is supported")
        max_eval = max_iter * 5 // 4 if max_eval is None else max_eval
        defaults = dict(lr=lr, max_iter=max_iter, max_eval=max_eval, tolerance_grad=tolerance_grad,
                        tolerance_change=tolerance_change, history_size=history_size, line_search_fn=line_search_fn)
        super().__init__(params, defaults)
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params = self.param_groups[0]["params"]

    def _flat_grad(self):
        return ops.cat([p.grad.reshape(-1) if p.grad is not None else ops.zeros(p.numel(), dtype=p.dtype)
                        for p in self._params])

    def _add_to_params(self, scale: float, direction) -> None:
        offset = 0
        for p in self._params:
            n = p.numel()
            p.add_(direction[offset:offset + n].view_as(p), alpha=scale)
            offset += n

    def _evaluate_at(self, closure, saved: list, t: float, direction):
        """Loss and flat gradient at ``saved + t * direction``; the parameters are restored afterwards."""
        self._add_to_params(t, direction)
        with enable_grad():
            loss = float(closure())
        grad = self._flat_grad()
        for p, value in zip(self._params, saved):
            p.copy_(value)
        return loss, grad

    def step(self, closure):
        """Run up to ``max_iter`` iterations; ``closure`` re-evaluates the loss (and its gradients) and returns it."""
        if closure is None:
            raise RuntimeError("LBFGS requires a closure")
        with no_grad():
            return self._step(closure)

    def _step(self, closure):
        group = self.param_groups[0]
        lr, max_iter, max_eval = group["lr"], group["max_iter"], group["max_eval"]
        tolerance_grad, tolerance_change = group["tolerance_grad"], group["tolerance_change"]
        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)
        with enable_grad():
            original_loss = closure()
        loss, evaluations = float(original_loss), 1
        state["func_evals"] += 1
        grad = self._flat_grad()
        if float(grad.abs().max()) <= tolerance_grad:
            return original_loss
        d, t = state.get("d"), state.get("t")
        old_dirs, old_steps, ro = state.get("old_dirs"), state.get("old_stps"), state.get("ro")
        h_diag, prev_grad, prev_loss = state.get("H_diag"), state.get("prev_flat_grad"), state.get("prev_loss")
        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1
            if state["n_iter"] == 1:
                d, old_dirs, old_steps, ro, h_diag = -grad, [], [], [], 1.0
            else:
                d, h_diag = self._direction(grad, prev_grad, d * t, old_dirs, old_steps, ro, h_diag,
                                            group["history_size"])
            prev_grad, prev_loss = grad.clone(), loss
            t = min(1.0, 1.0 / float(grad.abs().sum())) * lr if state["n_iter"] == 1 else lr
            slope = float(grad.dot(d))
            if slope > -tolerance_change:
                break
            line_evaluations = 0
            if group["line_search_fn"] == "strong_wolfe":
                saved = [p.clone() for p in self._params]
                loss, grad, t, line_evaluations = _strong_wolfe(
                    lambda step: self._evaluate_at(closure, saved, step, d), t, d, loss, grad, slope)
                self._add_to_params(t, d)
                converged = float(grad.abs().max()) <= tolerance_grad
            else:
                self._add_to_params(t, d)
                converged = False
                if n_iter != max_iter:
                    with enable_grad():
                        loss = float(closure())
                    grad = self._flat_grad()
                    converged, line_evaluations = float(grad.abs().max()) <= tolerance_grad, 1
            evaluations += line_evaluations
            state["func_evals"] += line_evaluations
            if (n_iter == max_iter or evaluations >= max_eval or converged
                    or float((d * t).abs().max()) <= tolerance_change or abs(loss - prev_loss) < tolerance_change):
                break
        state.update(d=d, t=t, old_dirs=old_dirs, old_stps=old_steps, ro=ro, H_diag=h_diag, prev_flat_grad=prev_grad,
                     prev_loss=prev_loss)
        return original_loss

    @staticmethod
    def _direction(grad, prev_grad, step, old_dirs, old_steps, ro, h_diag, history_size):
        """The two-loop recursion: ``-H grad`` with H the L-BFGS inverse-Hessian estimate (history updated)."""
        y = grad - prev_grad
        ys = float(y.dot(step))
        if ys > 1e-10:
            if len(old_dirs) == history_size:
                old_dirs.pop(0), old_steps.pop(0), ro.pop(0)
            old_dirs.append(y)
            old_steps.append(step)
            ro.append(1.0 / ys)
            h_diag = ys / float(y.dot(y))
        alphas = [0.0] * len(old_dirs)
        q = -grad
        for i in range(len(old_dirs) - 1, -1, -1):
            alphas[i] = float(old_steps[i].dot(q)) * ro[i]
            q = q - old_dirs[i] * alphas[i]
        r = q * h_diag
        for i in range(len(old_dirs)):
            beta = float(old_dirs[i].dot(r)) * ro[i]
            r = r + old_steps[i] * (alphas[i] - beta)
        return r, h_diag
