"""A compiled function behaves exactly like the plain one: one regression test per root
cause of a wrong result (the families of issue #17), each a minimal program compared
uncompiled vs compiled on every CPU backend, with a check that it really compiled."""
from __future__ import annotations

import collections


import dynamo_lite as dl
from tests.frames.differential import assert_transparent



def t(call: int, n: int = 3):
    """A fresh tensor whose values differ from call to call."""
    return dl.arange(float(n)) + call


class Box:
    """A plain object with attributes."""

    def __init__(self, **attrs):
        self.__dict__.update(attrs)


# -- A. a value read before a store is kept, never reloaded from the overwritten source ----
def test_a_attribute_read_before_store(backend):
    def f(x, obj):
        old = obj.t
        obj.t = x * 2
        return old

    assert_transparent(f, lambda c: (t(c), Box(t=t(c) + 10)), backend)


def test_a_item_read_before_store(backend):
    def f(x, xs):
        old = xs[0]
        xs[0] = x * 2
        return old, xs

    assert_transparent(f, lambda c: (t(c), [t(c) + 1, 5]), backend)


def test_a_pop_then_insert(backend):
    def f(x, queue):
        first = queue.pop(0)
        queue.insert(0, x * 3)
        return first + 1, queue

    assert_transparent(f, lambda c: (t(c), [t(c) + 7, t(c) - 1]), backend)


G_T = None


def _reset_global(call):
    global G_T
    G_T = t(call) + 100


def test_a_global_read_before_store(backend):
    def f(x):
        global G_T
        old = G_T
        G_T = x * 2
        return old

    assert_transparent(f, lambda c: (t(c),), backend, setup=_reset_global, state=lambda: G_T)


def test_a_read_before_store_across_a_break(backend):
    def f(x, obj):
        old = obj.t
        obj.t = x * 2
        print("break")
        return old + 1, obj.t

    assert_transparent(f, lambda c: (t(c), Box(t=t(c) + 10)), backend)


# -- B. a rolled-back speculative call keeps no container edits -----------------------------
COUNTS = {"calls": 0}


def _bump_and_check(n):
    COUNTS["calls"] += 1
    if n > 2:
        raise ValueError(f"too big: {n}")
    return n


def _reset_counts(call):
    COUNTS["calls"] = 0


def test_b_rollback_of_a_call_that_raises(backend):
    def f(x, n):
        COUNTS["calls"] += 1
        y = x * 2
        return y + _bump_and_check(n), COUNTS["calls"]

    assert_transparent(f, lambda c: (t(c), [1, 3, 2][c]), backend, setup=_reset_counts,
                       state=lambda: dict(COUNTS))


# -- C. in-place operators on containers mutate the real object ---------------------------
def test_c_list_iadd_mutates_the_argument(backend):
    def f(x, xs):
        xs += [x * 2]
        return len(xs)

    assert_transparent(f, lambda c: (t(c), [t(c)]), backend)


def test_c_dict_ior_mutates_the_argument(backend):
    def f(x, d):
        d |= {"k": x * 2}
        return len(d)

    assert_transparent(f, lambda c: (t(c), {"a": t(c)}), backend)


# -- D. a frame-made container is one object wherever it is referenced ---------------------
def test_d_list_returned_twice_is_one_list(backend):
    def f(x):
        items = [x * 2]
        return items, items

    assert_transparent(f, lambda c: (t(c),), backend)


def test_d_list_clear(backend):
    def f(x, y):
        z = x + 1
        items = [z, y]
        items.clear()
        return len(items), items

    assert_transparent(f, lambda c: (t(c), t(c) * 2), backend)


def test_d_aliases_across_a_break(backend):
    def f(x):
        items = [x * 2]
        alias = items
        print("break")
        alias.append(x + 1)
        return items, alias is items

    assert_transparent(f, lambda c: (t(c),), backend)


# -- E. iterating a container the loop mutates ---------------------------------------------
def test_e_loop_over_a_growing_list(backend):
    def f(x, xs):
        total = x * 0
        for v in xs:
            total = total + v
            if len(xs) < 4:
                xs.append(v * 2)
        return total, xs

    assert_transparent(f, lambda c: (t(c), [t(c), t(c) + 1]), backend)


def test_e_dict_changed_size_during_iteration(backend):
    def f(x, d):
        y = x * 2
        for k in d:
            d[k + "!"] = y
        return y

    assert_transparent(f, lambda c: (t(c), {"a": 1}), backend)


# -- F. builtins are never folded over live objects at trace time --------------------------
def test_f_sum_of_a_generator_argument(backend):
    def f(x, numbers):
        return x * sum(numbers)

    assert_transparent(f, lambda c: (t(c), (i for i in range(c + 2))), backend)


class Point:
    def __init__(self, v):
        self.v = v

    def __repr__(self):
        return f"Point({self.v})"


def test_f_repr_of_an_object_mutated_in_the_frame(backend):
    def f(x, p):
        p.v = p.v + 1
        return x * 2, repr(p)

    assert_transparent(f, lambda c: (t(c), Point(c)), backend)


# -- G. class attributes are guarded -------------------------------------------------------
class Kind:
    kind = "a"


def _set_kind(call):
    Kind.kind = "a" + "!" * call


def test_g_class_attribute_through_type(backend):
    def f(x, obj):
        return x * len(type(obj).kind)

    assert_transparent(f, lambda c: (t(c), Kind()), backend, setup=_set_kind)


# -- H. attribute stores go through properties, descriptors and __setattr__ -----------------
class Clamped:
    def __init__(self):
        self._v = 0

    @property
    def v(self):
        return self._v

    @v.setter
    def v(self, n):
        self._v = min(n, 3)


def test_h_property_setter(backend):
    def f(x, obj, n):
        obj.v = n
        return x * obj.v

    assert_transparent(f, lambda c: (t(c), Clamped(), [1, 7, 2][c]), backend)


class Recording:
    def __setattr__(self, name, value):
        object.__setattr__(self, "last", name)
        object.__setattr__(self, name, value)


def test_h_custom_setattr(backend):
    def f(x, obj):
        obj.a = x * 2
        return obj.a + 1

    assert_transparent(f, lambda c: (t(c), Recording()), backend)


# -- I. no user code runs at trace time that eager would not run ---------------------------
class Dynamic:
    def __init__(self):
        self.asked = []

    def __getattr__(self, name):
        self.asked.append(name)
        if name.startswith("__"):
            raise AttributeError(name)
        return 2


def test_i_user_getattr_is_not_probed(backend):
    def f(x, d):
        y = x + 1
        return y * d.scale

    assert_transparent(f, lambda c: (t(c), Dynamic()), backend)


# -- K. mutable default arguments -------------------------------------------------------------
def _accumulate(v, acc=[]):  # noqa: B006 (the shared default is the point)
    acc.append(v)
    return len(acc)


def _clear_default(call):
    _accumulate.__defaults__[0].clear()


def test_k_mutable_default_argument(backend):
    def f(x):
        return x * _accumulate(x + 1)

    assert_transparent(f, lambda c: (t(c),), backend, setup=_clear_default,
                       state=lambda: _accumulate.__defaults__)


# -- L. generators run lazily, in step with their consumer ---------------------------------
def _noisy(x, log):
    log.append("first")
    yield x * 2
    log.append("second")
    yield x * 3


def test_l_next_runs_only_to_the_first_yield(backend):
    def f(x):
        log = []
        return next(_noisy(x, log)) + 1, log

    assert_transparent(f, lambda c: (t(c),), backend)


# -- N. dict views are live ------------------------------------------------------------------
def test_n_dict_views_are_live(backend):
    def f(x, d):
        keys, values, items = d.keys(), d.values(), d.items()
        d["new"] = x * 2
        return list(keys), len(values), type(items).__name__, x + 1

    assert_transparent(f, lambda c: (t(c), {"a": t(c)}), backend)


# -- P. the standard library is never traced ------------------------------------------------
def test_p_namedtuple_created_in_the_frame(backend):
    def f(x):
        pair = collections.namedtuple("Pair", ["a", "b"])
        p = pair(x, x * 2)
        return p.a + p.b, p._fields

    assert_transparent(f, lambda c: (t(c),), backend)


# -- Q. containers built from others do not alias them --------------------------------------
def test_q_dict_from_pairs_does_not_alias(backend):
    def f(x):
        pairs = [("a", x)]
        d = dict(pairs)
        d["a"] = x + 10
        return pairs[0][1], d

    assert_transparent(f, lambda c: (t(c),), backend)


def test_q_dict_copy_and_keywords_do_not_alias(backend):
    def f(x, src):
        y = x * 2
        copied = src.copy()
        copied["a"] = x + 1
        again = dict(**src)
        again["b"] = y
        return src, copied, again

    assert_transparent(f, lambda c: (t(c), {"a": t(c)}), backend)


# -- R. values computed from a tensor's data are never baked in ----------------------------
def test_r_numpy_is_not_baked_in(backend):
    def f(a):
        b = a * 2
        n = b.numpy()
        return n + n, b

    assert_transparent(f, lambda c: (t(c) * 2,), backend)
