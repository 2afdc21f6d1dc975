"""A dict read with constant keys is guarded on the keys it read (NOTE: [dicts read key by
key]): the guards do not grow with the keys the frame never reads, a change of those keys
does not recompile, and adding or removing a key it read (or one it looked for and did not
find) still does. Iterating, ``len``, or mutating the dict guards all its keys, in order."""
from __future__ import annotations

import pytest

import dynamo_lite as dl
from tests.frames.differential import assert_transparent
from tests.helpers import assert_compiled, assert_same


def x3():
    return dl.arange(3.0) + 1


def _config(n: int, **used) -> dict:
    cfg = {f"unused{i}": i for i in range(n)}
    cfg.update(used)
    return cfg


def _reads(x, cfg):
    y = x * cfg["scale"]
    if "shift" in cfg:
        y = y + cfg["shift"]
    return y - cfg.get("bias", 0.5)


def _guards(fn, *args) -> list:
    report = dl.explain(fn, backend="eager")(*args)
    return [line for text in report.guards for line in text.splitlines()]


def test_the_guards_do_not_grow_with_unread_keys():
    small = _guards(_reads, x3(), _config(5, scale=2.0))
    large = _guards(_reads, x3(), _config(500, scale=2.0))
    assert small == large, (small, large)
    assert "('shift' in cfg) == False" in small and "cfg['scale'] == 2.0" in small, small


@pytest.mark.parametrize("cfg", [_config(3, scale=2.0), _config(3, scale=2.0, shift=1.0),
                                 _config(3, scale=3.0, bias=-1.0), {"scale": 1.5, "shift": 2.0, "bias": 0.0}])
def test_reads_agree_with_eager(cfg, backend):
    assert_same(_reads, x3(), cfg, backend=backend)


def test_changing_unread_keys_does_not_recompile_and_changing_read_ones_does():
    compiled = dl.compile(_reads, backend="eager")
    cfg = _config(4, scale=2.0)
    before = dl.stats()
    for change in (lambda: cfg.pop("unused0"), lambda: cfg.update(other=1), lambda: cfg.update(unused1=-5)):
        change()
        assert dl.allclose(compiled(x3(), cfg), _reads(x3(), cfg))
    after = dl.stats()
    assert_compiled(before, after)
    assert after.frames_compiled - before.frames_compiled == 1 and after.recompiles == before.recompiles
    for change in (lambda: cfg.update(shift=1.0), lambda: cfg.update(bias=3.0), lambda: cfg.pop("shift"),
                   lambda: cfg.update(scale=4.0)):
        change()  # a read key appears, disappears or changes: recompiled, still right
        assert dl.allclose(compiled(x3(), cfg), _reads(x3(), cfg))
    assert dl.stats().recompiles - after.recompiles == 4


def test_a_removed_key_raises_key_error_like_eager():
    def f(x, cfg):
        return x * cfg["scale"]

    compiled = dl.compile(f, backend="eager")
    cfg = {"scale": 2.0, "other": 1}
    assert dl.allclose(compiled(x3(), cfg), f(x3(), cfg))
    del cfg["scale"]
    with pytest.raises(KeyError, match="scale"):
        compiled(x3(), cfg)


def _iterates(x, cfg):
    y = x * 0
    for key in cfg:
        y = y + cfg[key] * len(key)
    return y, len(cfg)


def _mutates(x, cfg):
    cfg["seen"] = cfg.get("seen", 0) + 1
    return x * cfg["scale"]


def _mutates_then_breaks(x, cfg):
    cfg["scale"] = cfg["scale"] * 2
    print("break")
    return x * cfg["scale"], sorted(cfg)


@pytest.mark.parametrize("program, make_args", [
    (_iterates, lambda c: (x3(), {"a": 1.0, "bb": 2.0} if c < 2 else {"bb": 2.0, "a": 1.0})),  # order matters
    (_iterates, lambda c: (x3(), {"a": 1.0, "bb": 2.0, **({"ccc": 3.0} if c else {})})),
    (_mutates, lambda c: (x3(), _config(2, scale=2.0, **({"seen": 5} if c == 1 else {})))),
    (_mutates_then_breaks, lambda c: (x3(), _config(2, scale=float(c + 1)))),
], ids=["order", "added", "mutation", "mutation-and-break"])
def test_iteration_and_mutation_see_every_key(program, make_args, backend):
    assert_transparent(program, make_args, backend)


def test_isinstance_of_a_dict_reads_no_key():
    def f(x, cfg):
        return x * cfg["scale"] if isinstance(cfg, dict) else x

    guards = _guards(f, x3(), _config(20, scale=2.0))
    assert not any("keys()" in g for g in guards), guards
    assert_same(f, x3(), _config(20, scale=2.0))
