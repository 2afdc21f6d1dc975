"""A compiled step's guards on its optimizer: one edit count for the structure, never stale.

NOTE: [optimizer edit count] (optim/tracked.py): the per-call check of the optimizer's
frame compares one count instead of each parameter's group, state dict and state
tensors. Every way a user can change an optimizer between two compiled calls must then
either recompile or be read by the compiled code: each test below changes the eager and
the compiled run alike and compares them call by call.
"""
from __future__ import annotations

import copy
import io
import pickle

import pytest

import dynamo_lite as dl
from dynamo_lite import nn
from dynamo_lite.optim.tracked import EDITS, TrackedDict, TrackedList, TrackedState
from tests.helpers import assert_compiled
from tests.training.train_step_harness import (assert_same_state, make_train_step, mse, small_mlp,
                                               training_state)
from tests.training.train_step_harness import regression_batches as batches


def _first(opt):
    return opt.param_groups[0]["params"][0]


def _set_lr(opt):
    opt.param_groups[0]["lr"] = 0.5  # a float over a float: not counted, checked per call


def _weight_decay_off(opt):
    opt.param_groups[0]["weight_decay"] = 0  # an int over a float: counted


def _betas(opt):
    opt.param_groups[0]["betas"] = (0.5, 0.9)


def _new_step_tensor(opt):
    opt.state[_first(opt)]["step"] = dl.tensor(100.0)


def _reset_state_of_one(opt):
    del opt.state[_first(opt)]


def _state_dict_replaced(opt):
    p = _first(opt)
    opt.state[p] = {key: value.clone() * 0 for key, value in opt.state[p].items()}


def _drop_a_parameter(opt):
    opt.param_groups[0]["params"].pop()


def _params_list_replaced(opt):
    group = opt.param_groups[0]
    group["params"] = group["params"][1:]


def _group_added(opt):
    last = opt.param_groups[0]["params"].pop()
    opt.add_param_group({"params": [last], "lr": 0.2})


def _groups_replaced(opt):
    opt.param_groups = [dict(opt.param_groups[0], lr=0.3)]


def _state_loaded(opt):
    saved = opt.state_dict()
    saved["param_groups"][0]["lr"] = 0.05
    for entry in saved["state"].values():
        entry["exp_avg"] = entry["exp_avg"] * 2
    opt.load_state_dict(saved)


def _state_emptied(opt):
    opt.state.clear()


MUTATIONS = {f.__name__.lstrip("_"): f for f in (
    _set_lr, _weight_decay_off, _betas, _new_step_tensor, _reset_state_of_one, _state_dict_replaced,
    _drop_a_parameter, _params_list_replaced, _group_added, _groups_replaced, _state_loaded, _state_emptied)}


@pytest.mark.parametrize("name", sorted(MUTATIONS))
def test_every_mutation_path_recompiles_or_is_read(name):
    dl.reset()
    eager_model = small_mlp()
    compiled_model = copy.deepcopy(eager_model)
    eager_opt = dl.optim.AdamW(eager_model.parameters(), lr=1e-2, weight_decay=0.1)
    compiled_opt = dl.optim.AdamW(compiled_model.parameters(), lr=1e-2, weight_decay=0.1)
    eager_step = make_train_step(eager_model, eager_opt, mse)
    compiled = dl.compile(make_train_step(compiled_model, compiled_opt, mse))
    data = batches()
    before = dl.stats()
    for call in range(8):
        if call == 4:
            MUTATIONS[name](eager_opt)
            MUTATIONS[name](compiled_opt)
        x, y = data[call % len(data)]
        expected, actual = eager_step(x, y), compiled(x, y)
        assert abs(actual.item() - expected.item()) <= 1e-6 * max(1.0, abs(expected.item())), f"call {call}"
        assert_same_state(training_state(compiled_model, compiled_opt), training_state(eager_model, eager_opt),
                          where=f"call {call} after {name}")
    assert_compiled(before, dl.stats(), expect_breaks=dl.stats().graph_breaks - before.graph_breaks)


def _per_call_checks(guard_code: str) -> int:
    return guard_code.split("def __dl_full")[0].count(" and\n") + 1


def _optimizer_checks(n_blocks: int) -> tuple:
    dl.reset()
    dl.manual_seed(0)
    layers = [nn.Linear(8, 8) for _ in range(n_blocks)]
    model = nn.Sequential(*layers)
    opt = dl.optim.AdamW(model.parameters(), lr=1e-2)
    step = make_train_step(model, opt, mse)
    x, y = dl.randn(4, 8), dl.randn(4, 8)
    step(x, y)  # the state exists: the steady-state translation
    out = dl.explain(step)(x, y)
    assert len(out.frames) == 2 and not any(f.report.fallback_reason for f in out.frames)
    return _per_call_checks(out.frames[1].report.guard_code), len(list(model.parameters()))


def test_per_call_optimizer_checks_are_the_gradients_only():
    """What grows with the parameters is each one's gradient (loaded through the parameter,
    two checks): the group's structure, the parameters and the state cost one comparison."""
    (small, p_small), (large, p_large) = _optimizer_checks(1), _optimizer_checks(6)
    assert (large - small) / (p_large - p_small) == 4, (small, large)


def test_a_cached_call_runs_no_full_check_after_eager_steps_of_another_optimizer():
    model = small_mlp()
    opt = dl.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    other = dl.optim.Adam(small_mlp().parameters(), lr=0.1)
    step = dl.compile(make_train_step(model, opt, mse))
    (x, y), = batches(1)
    for _ in range(3):
        step(x, y)
    counted = EDITS.count
    for _ in range(3):
        step(x, y)
        other.zero_grad()
        other.step()  # steps in place: nothing counted
    assert EDITS.count == counted


def test_tracked_containers_count_each_edit_and_only_edits():
    state, groups = TrackedState(), TrackedList()
    entry = state["p"]
    assert type(entry) is TrackedDict
    edits = [
        lambda: entry.__setitem__("x", 1),
        lambda: entry.update(y=2),
        lambda: entry.pop("y"),
        lambda: entry.setdefault("z", 3),
        lambda: entry.__delitem__("z"),
        lambda: entry.__setitem__("lr", 0.1),
        lambda: entry.__setitem__("lr", 1),  # int over float
        lambda: groups.append(entry),
        lambda: groups.extend([entry]),
        lambda: groups.__setitem__(0, {}),
        lambda: groups.insert(0, {}),
        lambda: groups.remove(entry),
        lambda: groups.clear(),
        lambda: state.__setitem__("q", {}),
        lambda: state.pop("q"),
        lambda: setattr(state, "default_factory", dict),
        lambda: state.clear(),
    ]
    for edit in edits:
        before = EDITS.count
        edit()
        assert EDITS.count > before, edit
    entry["lr"], value = 0.1, object()
    entry["obj"] = value
    before = EDITS.count
    entry["lr"] = 0.2  # a float over a float (an lr schedule)
    entry["obj"] = value  # the same object (``state["step"] += 1`` on a tensor)
    entry.setdefault("lr", 5.0)
    assert EDITS.count == before


def test_optimizer_containers_survive_copy_and_pickle():
    model = small_mlp()
    opt = dl.optim.Adam(model.parameters(), lr=0.1)
    (x, y), = batches(1)
    mse(model(x), y).backward()
    opt.step()
    for clone in (copy.deepcopy(opt), pickle.loads(pickle.dumps(opt))):
        assert type(clone.state) is TrackedState and type(clone.param_groups) is TrackedList
        assert all(type(g) is TrackedDict and type(g["params"]) is TrackedList for g in clone.param_groups)
        assert all(type(s) is TrackedDict for s in clone.state.values())
        assert sorted(clone.param_groups[0]) == sorted(opt.param_groups[0])


def test_a_saved_state_dict_holds_plain_containers():
    model = small_mlp()
    opt = dl.optim.Adam(model.parameters(), lr=0.1)
    (x, y), = batches(1)
    mse(model(x), y).backward()
    opt.step()
    buffer = io.BytesIO()
    dl.save(opt.state_dict(), buffer)
    buffer.seek(0)
    loaded = dl.load(buffer)
    assert type(loaded["state"][0]) is dict and opt.state_dict()["state"][0]["exp_avg"] is opt.state[_first(opt)]["exp_avg"]
    opt.load_state_dict(loaded)
    assert type(opt.state[_first(opt)]) is TrackedDict


def test_the_tracked_containers_keep_their_types_when_compiled():
    # type(), isinstance and the copies of an optimizer's containers are what eager gives:
    # the subclasses themselves, and plain dicts/lists from copy(), | and slicing
    opt = dl.optim.SGD(nn.Linear(3, 2).parameters(), lr=0.1)

    def types_of(x):
        group = opt.param_groups[0]
        return (x + 1, type(opt.param_groups), type(group), type(group["params"]), type(opt.state),
                type(group.copy()), type(group | {"extra": 1}), type(opt.param_groups.copy()),
                type(opt.param_groups[:1]), isinstance(group, dict))

    expected = types_of(dl.ones(2))
    before = dl.stats()
    got = dl.compile(types_of)(dl.ones(2))
    assert_compiled(before, dl.stats())
    assert got[1:] == expected[1:]
    assert expected[1:5] == (TrackedList, TrackedDict, TrackedList, TrackedState)
