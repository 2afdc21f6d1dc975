"""Guard failures (recompile reasons) are one short line naming the guard, what it expected
and what it found: tensors by dtype and shape, never their data; long values cut short."""
from __future__ import annotations

import collections

import dynamo_lite as dl
from dynamo_lite.frames.tracing.guards import SHORT_REPR_LIMIT, short_repr


def _reasons(fn, *calls) -> list:
    """The guard failures of calling compiled ``fn`` with each argument tuple."""
    compiled = dl.compile(fn, backend="eager")
    before = len(dl.stats().guard_failures)
    for make_args in calls:
        compiled(*make_args())
    return [failure.reason for failure in dl.stats().guard_failures[before:]]


def _one_line_and_short(reason: str) -> None:
    assert "\n" not in reason
    assert len(reason) < 2 * SHORT_REPR_LIMIT + 80, reason


def _adam_state_or_double(x, opt):
    state = opt.state[opt.param_groups[0]["params"][0]]
    return x * 2 if not state else x + state["exp_avg"]


def test_a_tensor_dict_is_shown_by_dtype_and_shape_not_by_data():
    param = dl.nn.Parameter(dl.ones(64, 64))
    opt = dl.optim.Adam([param], lr=0.1)

    def after_a_step():
        param.grad = dl.ones(64, 64)
        opt.step()
        return dl.ones(64, 64), opt

    [reason] = _reasons(_adam_state_or_double, lambda: (dl.ones(64, 64), opt), after_a_step)
    assert reason.startswith("opt.state[opt.param_groups[0]['params'][0]]: expected None, got TrackedDict({"), reason
    assert "Tensor(dtype=float32, shape=[64, 64])" in reason
    assert "tensor(" not in reason  # no data
    _one_line_and_short(reason)


def _scaled_by_mode(x, cfg):
    return x * cfg["scale"] if cfg["mode"] == "train" else x


def test_a_long_constant_is_cut_short():
    reasons = _reasons(_scaled_by_mode, lambda: (dl.ones(2), {"scale": 2.0, "mode": "train"}),
                       lambda: (dl.ones(2), {"scale": 2.0, "mode": "t" + "x" * 500}))
    assert reasons == ["cfg['mode']: expected 'train', got 'txxxxxxxxxxxxxxxx...xxxxxxxxxxxxxxxxxx'"]


def _count_keys(x, d):
    return x * len(d)


def test_dict_keys_name_the_first_difference():
    many = lambda n: {i: dl.ones(2) for i in range(n)}  # noqa: E731
    assert _reasons(_count_keys, lambda: (dl.ones(2), many(30)), lambda: (dl.ones(2), many(31))) \
        == ["d.keys(): expected 30 keys, got 31 (more: [30])"]
    dl.reset()
    assert _reasons(_count_keys, lambda: (dl.ones(2), {0: 1, 1: 2, 5: 3}), lambda: (dl.ones(2), {0: 1, 2: 2, 5: 3})) \
        == ["d.keys()[1]: expected 1, got 2"]


def _apply(x, m):
    return m(x)


def test_a_replaced_parameter_is_named_with_its_shape():
    model = dl.nn.Sequential(dl.nn.Linear(2, 3))

    def replaced():
        model[0].weight = dl.nn.Parameter(dl.ones(3, 2))
        return dl.ones(2), model

    [reason] = _reasons(_apply, lambda: (dl.ones(2), model), replaced)
    assert reason.startswith("m._modules['0'].weight: expected the same object as when compiled, "
                             "<Parameter(dtype=float32, shape=[3, 2]) at 0x"), reason
    assert ", got <Parameter(dtype=float32, shape=[3, 2]) at 0x" in reason
    _one_line_and_short(reason)


def test_short_repr():
    assert short_repr(2.5) == "2.5"
    assert short_repr((1, "a")) == "(1, 'a')"
    assert short_repr(dl.zeros(3, 4, dtype=dl.int64)) == "Tensor(dtype=int64, shape=[3, 4])"
    assert short_repr([dl.ones(1)] * 9) == "[Tensor(dtype=float32, shape=[1]), Tensor(dtype=float32, shape=[1]), Tensor(d..."
    assert short_repr(collections.OrderedDict(b=1)) == "OrderedDict({'b': 1})"
    text = short_repr("line\n" * 1000)
    assert len(text) <= SHORT_REPR_LIMIT and "\n" not in text
