"""L-BFGS cases shared by the recorder (torch) and the tests: (name, problem, optimizer kwargs, steps).

Problems: "rosenbrock" (one parameter of 2 values), "regression" (a weight matrix and a bias fit
by least squares to fixed data: two parameters, so the flat-vector handling is exercised).
"""
import numpy as np

CASES = [
    ("rosenbrock_fixed_step", "rosenbrock", {"lr": 0.1, "max_iter": 5}, 4),
    ("rosenbrock_strong_wolfe", "rosenbrock", {"line_search_fn": "strong_wolfe", "max_iter": 10}, 3),
    ("regression_history_3", "regression", {"lr": 0.5, "history_size": 3, "max_iter": 8}, 3),
    ("regression_strong_wolfe", "regression", {"line_search_fn": "strong_wolfe", "history_size": 4}, 2),
]


def problem(lib, name):
    """(parameters, loss function of them) for a problem, built with ``lib`` (torch or dynamo_lite)."""
    rng = np.random.default_rng(0)
    if name == "rosenbrock":
        x = lib.tensor([-1.5, 2.0], dtype=lib.float64, requires_grad=True)
        return [x], lambda: (1 - x[0]) ** 2 + 100 * (x[1] - x[0] ** 2) ** 2
    inputs = lib.tensor(rng.standard_normal((8, 3)), dtype=lib.float64)
    targets = lib.tensor(rng.standard_normal((8, 2)), dtype=lib.float64)
    weight = lib.tensor(rng.standard_normal((3, 2)), dtype=lib.float64, requires_grad=True)
    bias = lib.tensor(np.zeros(2), dtype=lib.float64, requires_grad=True)
    return [weight, bias], lambda: ((inputs @ weight + bias - targets) ** 2).mean() + 0.01 * (weight ** 4).sum()


def run(lib, name, kind, kwargs, steps):
    """The returned loss and the parameters after each ``step``, and the closure-evaluation count."""
    params, loss_fn = problem(lib, kind)
    optimizer = lib.optim.LBFGS(params, **kwargs)
    calls = [0]

    def closure():
        calls[0] += 1
        optimizer.zero_grad()
        loss = loss_fn()
        loss.backward()
        return loss

    trace = []
    for _ in range(steps):
        loss = optimizer.step(closure)
        trace.append([float(loss.detach())] + [v for p in params for v in p.detach().reshape(-1).tolist()])
    return np.array(trace), calls[0]
