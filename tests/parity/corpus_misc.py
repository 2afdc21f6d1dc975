"""Side effects and errors, the kinds test_misc.py checks (one graph each, ``CompileCounter.frame_count``
1, with the mutation replayed after the graph): globals, objects and containers changed by the program,
exceptions raised with eager's type and message, grad mode and default dtype switches."""
from __future__ import annotations

import dynamo_lite as dl

from tests.parity.harness import Case, tensors

_COUNTER = {"calls": 0}
_LOG = []


class _Box:
    value = 0


_BOX = _Box()
_TOTAL = 0


def _reset(call):
    global _TOTAL
    _COUNTER["calls"] = 0
    _LOG.clear()
    _BOX.value = 0
    _TOTAL = 0


def _state():
    return dict(_COUNTER), list(_LOG), _BOX.value, _TOTAL


def p_global_dict_mutation(x):
    _COUNTER["calls"] += 1
    return x * 2


def p_global_list_append(x):
    _LOG.append("seen")
    return x + len(_LOG)


def p_global_object_setattr(x):
    _BOX.value = 7
    return x * _BOX.value


def p_global_int_rebind(x):
    global _TOTAL
    _TOTAL = _TOTAL + 3
    return x * _TOTAL


def p_raise_value_error(x):
    y = x * 2
    if y.shape[0] == 4:
        raise ValueError("four rows are not allowed")
    return y


def p_shape_error_message(x):
    return x @ dl.ones(3, 2)


def p_set_grad_enabled(x):
    with dl.set_grad_enabled(False):
        y = x * 2
    return y, dl.is_grad_enabled()


def p_enable_grad_inside_no_grad(x):
    with dl.no_grad():
        with dl.enable_grad():
            y = x * 2
    return y + 1


def p_new_tensor_factories(x):
    return dl.zeros_like(x) + dl.ones(4, 4) * dl.arange(4.0) + dl.full((4, 4), 2.0)


def p_dtype_conversions(x):
    return (x > 0).to(dl.float32) + x.double().float() + x.int().float()


def p_view_aliasing(x):
    y = x.clone()
    v = y[0]
    v.add_(10)
    return y, v


def p_return_same_tensor_twice(x):
    y = x + 1
    return y, y


def p_returns_argument(x):
    return x


def p_indexing_forms(x):
    return x[1:, ::2], x[..., 0], x[None, 1], x[[0, 2]], x[x[:, 0] > 100]


def p_inplace_setitem(x):
    y = x.clone()
    y[0] = 0
    y[:, 1] += 1
    return y


def p_where_masked_fill(x):
    return dl.where(x > 0, x, dl.zeros_like(x)).masked_fill(x < -1, 5.0)


#: A program without tensor ops makes no graph in TorchDynamo (an empty graph is not compiled: frame_count 0).
_NO_GRAPH = {"p_returns_argument"}
#: A boolean-mask index has a data-dependent size: TorchDynamo breaks there too (its
#: capture_dynamic_output_shape_ops is off by default); nothing after it needs a second graph.
_BREAKS = {"p_indexing_forms": 1}
CASES = [Case(name[2:], fn, tensors((4, 4)), 0 if name in _NO_GRAPH else 1, setup=_reset, state=_state,
              dynamo_breaks=_BREAKS.get(name)) for name, fn in dict(globals()).items()
         if name.startswith("p_") and callable(fn)]
