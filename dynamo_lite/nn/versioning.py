"""Module version tags: one number per module that changes whenever its subtree changes.

NOTE: [module version tags] Every ``Module`` holds ``_version_tag``, an int drawn from
one process-wide counter, and ``_parents``, weak links to the modules that registered
it as a child. ``changed(module)`` draws a new number and writes it on the module and
on every ancestor (through ``_parents``), so the tag of a root changes whenever
anything below it changes, and a guard on a whole module tree is one comparison:
``root._version_tag == recorded`` (see NOTE: [guard tree] in the guards module).
Numbers are never reused, so a replaced child cannot bring an old number back.

What calls ``changed`` (the mutations covered):

- ``Module.__setattr__`` of anything (parameter, buffer, submodule, plain attribute,
  ``training``), except assigning a plain attribute the very object it already holds;
- ``Module.__delattr__``; ``register_parameter``, ``register_buffer``,
  ``add_module``/``register_module``;
- ``train()``/``eval()`` (through ``__setattr__`` of ``training``);
- ``to()``/``float()``/``double()``/``half()``/``cpu()``/``cuda()`` (buffers replaced;
  parameters are rebound in place, which ``tensor_rebound`` counts, below);
- ``load_state_dict`` (in-place copies change values only, which graphs read at run
  time; ``assign=True`` replaces buffers and rebinds parameters);
- every edit of ``Sequential``/``ModuleList``/``ModuleDict`` (set, delete, insert,
  append, extend, pop, clear, update).
- ``register_forward_pre_hook``/``register_forward_hook`` and ``remove()`` of their handles.

A ``Parameter`` keeps its identity when its data is swapped (``p.data = t``,
``Module.to``): ``Tensor._set_data`` calls ``tensor_rebound()`` (for every tensor, so
buffers and optimizer state too), which bumps
``REBINDS.count`` (so does changing a Parameter's ``requires_grad``, which compiled
training graphs depend on); guards that trust a tag for tensors' dtype/shape/strides also compare
that count (rebinding is rare, so one process-wide counter costs nothing). Any new
operation that changes a tensor's storage, dtype or geometry in place (``set_``,
``resize_``, an in-place view op) must call ``tensor_rebound()`` as well.

Not covered (still guarded one by one, or documented as unsupported): writes that
bypass the Module API (``m.__dict__[...] = v``, ``object.__setattr__(m, ...)``,
``m._modules[k] = v``); mutation of a mutable plain attribute's contents
(``m.sizes.append(3)`` on a list attribute); class attributes; globals and closure
cells; a tensor's values (graphs read them at run time).
"""
from __future__ import annotations

import itertools
import weakref

from ..tensor.rebinds import REBINDS, RebindCount, tensor_rebound  # noqa: F401  (re-exported)

_TAGS = itertools.count(1)


def init_tags(module) -> None:
    """Give a new module its first tag and an empty set of parents (from ``Module.__init__``)."""
    d = module.__dict__
    d["_version_tag"] = next(_TAGS)
    d.setdefault("_parents", {})


def changed(module) -> None:
    """Give ``module`` and every module above it a new tag."""
    tag = next(_TAGS)
    pending, seen = [module], set()
    while pending:
        current = pending.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        d = current.__dict__
        d["_version_tag"] = tag
        parents = d.get("_parents")
        if parents:
            for key, ref in list(parents.items()):
                parent = ref()
                if parent is None:
                    del parents[key]
                else:
                    pending.append(parent)


def link(parent, child) -> None:
    """Record that ``parent`` registered ``child`` (a Module or None) as a submodule.

    Links are never removed when the child leaves (a stale link only makes a mutation of
    the old child also retag its former parent, which is safe).
    """
    if child is None or child is parent:
        return
    parents = child.__dict__.setdefault("_parents", {})
    parents[id(parent)] = weakref.ref(parent)


def state_without_links(module) -> dict:
    """The module's ``__dict__`` for pickling/copying: weak links cannot be copied."""
    state = dict(module.__dict__)
    state.pop("_parents", None)
    return state


def restore_links(module, state: dict) -> None:
    """Finish unpickling/copying: a fresh tag, and links to the restored children.

    A child restored after its parent keeps the link the parent already made.
    """
    module.__dict__.update(state)
    module.__dict__.setdefault("_parents", {})
    module.__dict__["_version_tag"] = next(_TAGS)
    for child in state.get("_modules", {}).values():
        link(module, child)
