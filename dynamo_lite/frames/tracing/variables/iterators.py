"""Iterators during tracing: lazy, in step with their consumer, live over the containers they walk."""
from __future__ import annotations

import itertools
import types

from ...errors import Unsupported, UserError
from .base import ConstantVariable, VariableTracker


def _iterator_at(iterable, position: int):
    """``iter(iterable)`` advanced by ``position`` items (rebuilds a live iterator)."""
    iterator = iter(iterable)
    for _ in range(position):
        next(iterator)
    return iterator


class IteratorVariable(VariableTracker):
    """An iterator over a fixed list of variables (a range, a tuple, constants ...).

    ``next_item(tx)`` returns the next variable or None when exhausted; ``unpack``
    drains what is left. Subclasses compute items lazily.
    """

    def __init__(self, items=()):
        self.items = list(items)
        self.index = 0

    def python_type(self) -> type:
        return type(iter(()))

    def next_item(self, tx):
        if self.index >= len(self.items):
            return None
        tx.output.side_effects.journal_state(self)
        item = self.items[self.index]
        self.index += 1
        return item

    def unpack(self, tx) -> list:
        items = []
        while (item := self.next_item(tx)) is not None:
            items.append(item)
        return items

    def save_state(self):
        return self.index

    def restore_state(self, state) -> None:
        self.index = state

    def truth(self, tx) -> bool:
        return True

    def live_across_breaks(self) -> bool:
        """Whether a graph break passes this iterator itself to the resume function (a real
        iterator over the same list, which code after the break may still mutate) instead
        of the items it has left (``frozen``)."""
        return False

    def frozen(self, tx) -> "IteratorVariable":
        """An iterator over the items this one has left, computed now (a graph break
        passes a loop's iterator to the resume function as those items).

        Computing them ahead of the loop is only exact when doing so changes nothing
        else (no side effect, no in-place op, no other variable), else Unsupported.
        """
        if type(self) is IteratorVariable or self.live_across_breaks():
            return self
        output = tx.output
        checkpoint = output.checkpoint()
        items = self.unpack(tx)
        effects = output.side_effects
        n_entries, n_journal = checkpoint[1]
        changed = len(effects.entries) != n_entries or any(
            not isinstance(variable, IteratorVariable) for variable, _ in effects.journal[n_journal:])
        impure = any("inplace" in getattr(node.target, "tags", ()) for node in output.nodes_since(checkpoint))
        if changed or impure:
            output.rollback(checkpoint)
            raise Unsupported("a loop over an iterator with side effects cannot continue after a graph break")
        return IteratorVariable(items)

    def children(self) -> list:
        return self.items[self.index:]

    def reconstruct_items(self, cg) -> None:
        """What a resume function's stack slot of layout "iter" takes (its prologue applies
        GET_ITER): the items not yet consumed as a tuple, which the translator of the resume
        function sees through; an iterator live across the break (``frozen``) is itself."""
        if self.live_across_breaks():
            self.reconstruct(cg)
            return
        for item in self.children():
            cg.reconstruct(item)
        cg.build(tuple, len(self.children()))

    def reconstruct(self, cg) -> None:
        """An iterator over the items not yet consumed, ``iter((...))``: a real iterator wherever
        else the value goes (an argument of the call run at a break, such as a 3.11
        comprehension's function, whose FOR_ITER needs one)."""
        cg.call_const(iter, lambda: self.reconstruct_items(cg), 1)


class ContainerIteratorVariable(IteratorVariable):
    """``iter(xs)`` of a list (or tuple) variable: reads the live contents at each step,
    so appending to the list while looping over it is seen, as in Python."""

    def __init__(self, container):
        super().__init__()
        self.container = container
        self.exhausted = False  # like Python's: once exhausted it stays so, even if the list grows

    def python_type(self) -> type:
        return type(iter(self.container.container_type()))

    def save_state(self):
        return self.index, self.exhausted

    def restore_state(self, state) -> None:
        self.index, self.exhausted = state

    def live_across_breaks(self) -> bool:
        return self.container.container_type is list and not self.exhausted

    def next_item(self, tx):
        items = self.container.items
        if self.exhausted:
            return None
        tx.output.side_effects.journal_state(self)
        if self.index >= len(items):
            self.exhausted = True
            return None
        self.index += 1
        return items[self.index - 1]

    def children(self) -> list:
        return [self.container]

    def reconstruct(self, cg) -> None:
        def emit_args():
            cg.reconstruct(self.container)
            cg.load_const(len(self.container.items) if self.exhausted else self.index)

        cg.call_const(_iterator_at, emit_args, 2)


class DictIteratorVariable(IteratorVariable):
    """``iter(d)``/``iter(d.items())`` ...: live over a dict variable; a change of the
    dict's size or keys while iterating raises what Python raises."""

    def __init__(self, view):
        super().__init__()
        self.view = view  # a DictViewVariable
        self.keys = list(view.dict_var.items)

    def python_type(self) -> type:
        return type(iter(getattr({}, self.view.kind)()))

    def next_item(self, tx):
        current = list(self.view.dict_var.items)
        if len(current) != len(self.keys):
            raise UserError(RuntimeError("dictionary changed size during iteration"))
        if current != self.keys:
            raise UserError(RuntimeError("dictionary keys changed during iteration"))
        if self.index >= len(current):
            return None
        tx.output.side_effects.journal_state(self)
        self.index += 1
        return self.view.element(current[self.index - 1])

    def frozen(self, tx) -> "IteratorVariable":
        # Neither a snapshot of the keys left nor a new iterator over the dict behaves like
        # the interpreter's own iterator, which raises once code after the break resizes
        # the dict: the frame runs eagerly.
        raise Unsupported("a loop over a dict cannot continue after a graph break (the frame runs eagerly)")

    def children(self) -> list:
        return [self.view]

    def reconstruct(self, cg) -> None:
        def emit_args():
            cg.reconstruct(self.view)
            cg.load_const(self.index)

        cg.call_const(_iterator_at, emit_args, 2)


class LazyIteratorVariable(IteratorVariable):
    """``map``/``filter``/``zip``/``enumerate`` over other iterators: each item is computed
    when the consumer asks for it (a mapped function runs in step with the loop)."""

    def __init__(self, kind: str, iterators: list, fn=None, start: int = 0, strict: bool = False):
        super().__init__()
        self.kind, self.iterators, self.fn = kind, list(iterators), fn
        self.count, self.strict, self.done = start, strict, False

    def python_type(self) -> type:
        return {"map": map, "filter": filter, "zip": zip, "enumerate": enumerate, "chain": itertools.chain}[self.kind]

    def live_across_breaks(self) -> bool:
        return self.kind == "enumerate" and not self.done and self.iterators[0].live_across_breaks()

    def save_state(self):
        return self.count, self.done

    def restore_state(self, state) -> None:
        self.count, self.done = state

    def next_item(self, tx):
        if self.done:
            return None
        item = _LAZY_STEPS[self.kind](self, tx)
        if item is None:
            tx.output.side_effects.journal_state(self)
            self.done = True
        return item

    def children(self) -> list:
        return list(self.iterators) + ([self.fn] if self.fn is not None else [])

    def reconstruct(self, cg) -> None:
        if self.done:
            cg.build(tuple, 0)
            return
        builtin = self.python_type()

        iterators = self.iterators[self.count:] if self.kind == "chain" else self.iterators

        def emit_args():
            if self.fn is not None:
                cg.reconstruct(self.fn)
            for iterator in iterators:
                cg.reconstruct(iterator)
            if self.kind == "enumerate":
                cg.load_const(self.count)

        nargs = (self.fn is not None) + len(iterators) + (self.kind == "enumerate")
        cg.call_const(builtin, emit_args, nargs)


def _map_step(it, tx):
    args = []
    for iterator in it.iterators:
        item = iterator.next_item(tx)
        if item is None:
            return None
        args.append(item)
    return it.fn.call(tx, args, {})


def _filter_step(it, tx):
    while (item := it.iterators[0].next_item(tx)) is not None:
        keep = item if it.fn is None or _is_none(it.fn) else it.fn.call(tx, [item], {})
        if keep.truth(tx):
            return item
    return None


def _is_none(variable) -> bool:
    return variable.is_python_constant() and variable.as_python_constant() is None


def _zip_step(it, tx):
    row = []
    for position, iterator in enumerate(it.iterators):
        item = iterator.next_item(tx)
        if item is None:
            if it.strict:
                _check_zip_lengths(it, tx, position)
            return None
        row.append(item)
    return tx.build_tuple(row)


def _check_zip_lengths(it, tx, position: int) -> None:
    """``zip(strict=True)``: the error Python raises when argument ``position`` ran out."""
    def before(n):
        return "argument 1" if n == 1 else f"arguments 1-{n}"

    if position:
        raise UserError(ValueError(f"zip() argument {position + 1} is shorter than {before(position)}"))
    for later, iterator in enumerate(it.iterators[1:], 1):
        if iterator.next_item(tx) is not None:
            raise UserError(ValueError(f"zip() argument {later + 1} is longer than {before(later)}"))


def _enumerate_step(it, tx):
    item = it.iterators[0].next_item(tx)
    if item is None:
        return None
    tx.output.side_effects.journal_state(it)
    it.count += 1
    return tx.build_tuple([ConstantVariable(it.count - 1), item])


def _chain_step(it, tx):
    while it.count < len(it.iterators):
        item = it.iterators[it.count].next_item(tx)
        if item is not None:
            return item
        tx.output.side_effects.journal_state(it)
        it.count += 1
    return None


_LAZY_STEPS = {"map": _map_step, "filter": _filter_step, "zip": _zip_step, "enumerate": _enumerate_step,
               "chain": _chain_step}


def iterate(tx, value) -> IteratorVariable:
    """``iter(value)`` on a variable."""
    if isinstance(value, IteratorVariable):
        return value
    make = getattr(value, "iterate", None)
    if make is not None:
        return make(tx)
    return IteratorVariable(value.unpack(tx))


class GeneratorVariable(IteratorVariable):
    """A generator made by calling a user generator function: its body runs on its own
    translator, one ``yield`` at a time, when the consumer asks for the next item, so
    its side effects interleave with the consumer's as in Python."""

    def __init__(self, child, fn_var, args: list, kwargs: dict):
        super().__init__()
        self.child, self.fn_var, self.args, self.kwargs = child, fn_var, list(args), dict(kwargs)
        self.started = False

    def python_type(self) -> type:
        return types.GeneratorType

    def save_state(self):
        child = self.child
        return self.started, child.pc, list(child.stack), dict(child.locals), child.returned, child.steps

    def restore_state(self, state) -> None:
        child = self.child
        self.started, child.pc, child.stack, child.locals, child.returned, child.steps = state

    def next_item(self, tx):
        child = self.child
        if child.returned is not None:
            return None
        tx.output.side_effects.journal_state(self)
        self.started = True
        child.yielded = None
        try:
            child.run()
        except UserError as error:
            child.returned = ConstantVariable(None)  # what leaves a generator finishes it
            raise _stop_iteration_leaving(error) from None
        value, child.yielded = child.yielded, None
        return value

    def throw(self, tx, exception):
        """``gen.throw(exception)`` (an exception variable): raised at the paused ``yield``;
        returns the next value yielded, or None once the generator returned. What the
        generator lets out is raised (a UserError) and finishes it."""
        child = self.child
        error = UserError(exception.exception_object())
        error.variable = exception
        tx.output.side_effects.journal_state(self)
        if child.returned is not None or not self.started:  # it never runs: the exception leaves at once
            child.returned = ConstantVariable(None)
            raise error
        child.yielded = None
        try:
            child.throw(error)
        except UserError as leaving:
            child.returned = ConstantVariable(None)
            raise _stop_iteration_leaving(leaving) from None
        value, child.yielded = child.yielded, None
        return value

    def children(self) -> list:
        return [self.fn_var, *self.args, *self.kwargs.values()]

    def live_across_breaks(self) -> bool:
        return not self.started  # made again by the same call: nothing of it has run yet

    def reconstruct(self, cg) -> None:
        if self.started:
            raise Unsupported("a generator that has started running cannot be rebuilt in compiled code")
        emit_call(cg, self.fn_var, self.args, self.kwargs)


def _stop_iteration_leaving(error: UserError) -> UserError:
    """PEP 479: a StopIteration that leaves a generator's body becomes a RuntimeError."""
    if not isinstance(error.exception, StopIteration):
        return error
    replaced = RuntimeError("generator raised StopIteration")
    replaced.__cause__ = error.exception
    return UserError(replaced)


def emit_call(cg, fn, args: list, kwargs: dict) -> None:
    """Emit ``fn(*args, **kwargs)`` over variables (rebuilds what a call made that has not run)."""
    def emit_args():
        cg.reconstruct(fn)
        for arg in args:
            cg.reconstruct(arg)
        cg.build(tuple, len(args))
        for name, value in kwargs.items():
            cg.load_const(name)
            cg.reconstruct(value)
        cg.build(dict, len(kwargs))

    cg.call_const(call_with_keywords, emit_args, 3)


def call_with_keywords(fn, args: tuple, kwargs: dict):
    """``fn(*args, **kwargs)``."""
    return fn(*args, **kwargs)
