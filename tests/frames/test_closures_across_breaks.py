"""Lambdas, nested functions and generator expressions that close over a frame variable
live across a graph break: the frame compiles with the break (no eager fallback), and the
code after the break shares the very cells of the code before it, as in the eager frame."""
from __future__ import annotations

import dynamo_lite as dl
from tests.helpers import assert_compiled, assert_equal_values, assert_same


def x3():
    return dl.arange(3.0) + 1


# -- a closure made before the break, called after it -----------------------------------
def _made_before_called_after(x):
    y = x * 2
    g = lambda: y + 1  # noqa: E731
    print("break")
    return g() * x


def _reassigned_after_the_break(x):
    y = x * 2
    g = lambda: y + 1  # noqa: E731
    print("break")
    y = x - 5  # the closure sees the later assignment: one cell
    return g()


def _made_after_the_break(x):
    y = x * 2
    print("break")
    g = lambda: y * 3  # noqa: E731
    return g() + y


def _nonlocal_write_after_the_break(x):
    y = x * 2

    def bump():
        nonlocal y
        y = y + 1

    print("break")
    bump()
    bump()
    return y


def _nonlocal_write_before_the_break(x):
    y = x * 2

    def bump():
        nonlocal y
        y = y * 10

    bump()
    print("break")
    return y + 1


def _unbound_at_the_break(x):
    g = lambda: y - 1  # noqa: E731
    print("break")
    y = x * 4
    return g()


def _two_closures_one_cell(x):
    total = x * 0

    def add(v):
        nonlocal total
        total = total + v

    def read():
        return total

    add(x)
    print("break")
    add(x * 2)
    return read(), total


def _argument_in_a_cell(x, k):
    g = lambda: x * k  # noqa: E731
    print("break")
    k = k + 1
    return g()


def _two_breaks(x):
    y = x + 1
    g = lambda: y * 2  # noqa: E731
    print("first")
    y = y + 1
    h = lambda: g() + y  # noqa: E731
    print("second")
    y = y + 1
    return h()


def _generator_expression_after_the_break(x, xs):
    scale = x.sum()
    print("break")
    return sum(v * scale for v in xs)


def test_made_before_called_after():
    assert_same(_made_before_called_after, x3(), expect_breaks=1)


def test_reassigned_after_the_break():
    assert_same(_reassigned_after_the_break, x3(), expect_breaks=1)


def test_made_after_the_break():
    assert_same(_made_after_the_break, x3(), expect_breaks=1)


def test_nonlocal_write_after_the_break():
    assert_same(_nonlocal_write_after_the_break, x3(), expect_breaks=1)


def test_nonlocal_write_before_the_break():
    assert_same(_nonlocal_write_before_the_break, x3(), expect_breaks=1)


def test_unbound_at_the_break():
    assert_same(_unbound_at_the_break, x3(), expect_breaks=1)


def test_two_closures_one_cell():
    assert_same(_two_closures_one_cell, x3(), expect_breaks=1)


def test_argument_in_a_cell():
    assert_same(_argument_in_a_cell, x3(), 2.0, expect_breaks=1)


def test_two_breaks():
    assert_same(_two_breaks, x3(), expect_breaks=2)


def test_generator_expression_after_the_break():
    assert_same(_generator_expression_after_the_break, x3(), [x3(), x3() * 2], expect_breaks=1)


def test_printed_output_is_the_eager_one(capsys):
    assert_same(_two_breaks, x3(), expect_breaks=2)
    assert capsys.readouterr().out == "first\nsecond\n" * 4  # 2 calls, eager and compiled


# -- a closure that outlives the frame ----------------------------------------------------
def _returned(x):
    y = x * 2
    g = lambda: y + x  # noqa: E731
    print("break")
    y = y * 3
    return g


def _returned_after_the_break(x):
    y = x * 2
    print("break")
    return lambda: y - 1


class Holder:
    pass


def _stored_on_an_object(x, holder):
    y = x + 1
    holder.fn = lambda: y * 2
    print("break")
    y = y + 10
    return x


def _returned_pair_sharing_a_cell(x):
    count = x * 0

    def inc():
        nonlocal count
        count = count + 1
        return count

    def get():
        return count

    print("break")
    inc()
    return inc, get


def _outlived(fn, *args):
    """``fn(*args)`` eager and compiled; the closures it leaves behind, called after it
    returned, give the same values; the frame compiled with one break."""
    compiled = dl.compile(fn, backend="eager")
    before = dl.stats()
    for _ in range(2):
        eager_holder, compiled_holder = Holder(), Holder()
        expected = fn(*args, eager_holder) if fn is _stored_on_an_object else fn(*args)
        actual = compiled(*args, compiled_holder) if fn is _stored_on_an_object else compiled(*args)
        if fn is _stored_on_an_object:
            expected, actual = eager_holder.fn, compiled_holder.fn
        if isinstance(expected, tuple):
            expected_values = [g() for g in expected for _ in range(2)]
            actual_values = [g() for g in actual for _ in range(2)]
        else:
            expected_values, actual_values = [expected(), expected()], [actual(), actual()]
        assert_equal_values(actual_values, expected_values)
    assert_compiled(before, dl.stats(), expect_breaks=1)


def test_returned_closure_sees_the_last_assignment():
    _outlived(_returned, x3())


def test_closure_made_after_the_break_returned():
    _outlived(_returned_after_the_break, x3())


def test_closure_stored_on_an_object():
    _outlived(_stored_on_an_object, x3())


def test_returned_closures_share_their_cell():
    _outlived(_returned_pair_sharing_a_cell, x3())


# -- the compiled frame is itself a closure ---------------------------------------------------
def _make_scaled(k):
    def scaled(x):
        y = x + k
        print("break")
        return y + k
    return scaled


def test_each_closure_instance_resumes_with_its_own_cells():
    # Two instances of one code: the second hits the first one's cache entry (same guards),
    # and its code after the break must read its own ``k``, not the first instance's.
    first, second = _make_scaled(dl.ones(3)), _make_scaled(dl.ones(3) * 10)
    before = dl.stats()
    for fn in (first, second, first):
        assert_equal_values(dl.compile(fn, backend="eager")(x3()), fn(x3()))
    assert_compiled(before, dl.stats(), expect_breaks=1)


def _make_counter(start):
    count = start

    def step(x):
        nonlocal count
        count = count + 1
        g = lambda: count * x  # noqa: E731
        print("break")
        count = count + 1
        return g()

    return step


def test_nonlocal_of_the_enclosing_function_across_the_break():
    # (a tensor count: an int would be a guarded constant, one translation per value)
    eager, compiled = _make_counter(dl.ones(3)), _make_counter(dl.ones(3))
    compiled_step = dl.compile(compiled, backend="eager")
    before = dl.stats()
    for _ in range(3):
        assert_equal_values(compiled_step(x3()), eager(x3()))
    assert_equal_values(compiled.__closure__[0].cell_contents, eager.__closure__[0].cell_contents)
    assert_equal_values(eager.__closure__[0].cell_contents, dl.ones(3) * 7)
    assert_compiled(before, dl.stats(), expect_breaks=1)


# -- loops --------------------------------------------------------------------------------
def _closure_made_in_a_loop_with_a_break(x, xs):
    fns = []
    for v in xs:
        print("break")
        fns.append(lambda: v * acc)
        acc = v.sum()
    acc = x.sum() * 100
    return [f() for f in fns]


def test_closures_made_in_a_loop_see_the_last_values():
    assert_same(_closure_made_in_a_loop_with_a_break, x3(), [x3(), x3() * 2], expect_breaks=1)


# -- a recursive closure: its cell holds the function holding the cell ------------------------
def _recursive_inner_function(x):
    def halve(n):
        return x if n == 0 else halve(n - 1) / 2
    print("break")
    return halve(2)


def _recursive_factorial(x):
    def fact(n):
        return 1 if n <= 1 else n * fact(n - 1)
    y = x + 1
    print("hi")
    return y * fact(4)


def _recursion_through_two_functions(x):
    def even(n):
        return True if n == 0 else odd(n - 1)

    def odd(n):
        return False if n == 0 else even(n - 1)
    y = x * 2
    print("break")
    return y + 1 if even(4) else y - 1, odd(3)


def test_recursive_closures_compile_with_the_break():
    # The cell is made empty, the function over it, and then the cell gets the function.
    for program in (_recursive_inner_function, _recursive_factorial, _recursion_through_two_functions):
        assert_same(program, x3(), expect_breaks=1)


def test_a_recursive_closure_returned_is_the_one_its_cell_holds():
    def f(x):
        def fact(n):
            return 1 if n <= 1 else n * fact(n - 1)
        y = x - 1
        print("break")
        return y, fact

    before = dl.stats()
    _, fact = dl.compile(f, backend="eager")(x3())
    assert_compiled(before, dl.stats(), expect_breaks=1)
    assert fact.__closure__[0].cell_contents is fact and fact(5) == 120


# -- closures from outside the frame keep their identity ---------------------------------------
def _same_closure_twice(x, act, other):
    return act(x) if act is other else x + 1


def test_a_closure_argument_is_still_compared_by_identity():
    scale = dl.ones(3) * 2
    act = lambda t: t * scale  # noqa: E731
    assert_same(_same_closure_twice, x3(), act, act)
    assert_same(_same_closure_twice, x3(), act, lambda t: t)


class _Base:
    def __init__(self, x):
        self.x = x


class _Child(_Base):
    def __init__(self, x):
        print("made")  # a graph break inside the method
        super().__init__(x * 2)


def test_zero_argument_super_after_a_graph_break(capsys):
    # 3.11: super() read __class__ and self by position from the resume function's frame and raised
    # "super() argument 1 must be type, not Tensor" into the user's call; that method now runs eagerly
    from dynamo_lite.frames.bytecode import compat

    def f(x):
        return _Child(x).x + 1

    x = dl.ones(3)
    before = dl.stats()
    result = dl.compile(f, backend="eager")(x)
    after = dl.stats()
    assert result.tolist() == f(x).tolist() == [3.0, 3.0, 3.0]
    assert capsys.readouterr().out == "made\nmade\n"
    fallbacks = after.fallbacks[len(before.fallbacks):]
    if compat.SUPER_READS_THE_FRAME:
        assert [fb.function for fb in fallbacks] == ["_Child.__init__"] and "super()" in fallbacks[0].reason
    else:
        assert not fallbacks
    assert after.graph_count > before.graph_count
