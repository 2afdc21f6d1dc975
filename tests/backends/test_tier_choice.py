"""Choosing between tiers and eager by measurement, driven by made-up timings (never real ones)."""
from __future__ import annotations

import pytest

from dynamo_lite.backends.tier_choice import TierChoice
from dynamo_lite.backends.tiered import Tier, TieredFunction


def run(choice: TierChoice, times: dict, limit: int = 100) -> list:
    """Feed ``choice`` the time of each candidate it asks for until it decides; the names it ran."""
    ran = []
    while not choice.decided and len(ran) < limit:
        name = choice.next()
        ran.append(name)
        choice.record(name, times[name])
    return ran


def test_the_fastest_median_wins_after_the_warmups_and_rounds():
    choice = TierChoice(["native", "numpy", "eager"], rounds=3)
    ran = run(choice, {"native": 2.0, "numpy": 1.5, "eager": 1.6})
    assert choice.winner == "numpy"
    assert ran[:3] == ["native", "numpy", "eager"]  # interleaved, one call each per round
    assert len(ran) == 3 * 4  # a warm-up round, then three counted ones
    assert choice.medians() == {"native": 2.0, "numpy": 1.5, "eager": 1.6}


def test_warmup_calls_are_not_counted():
    choice = TierChoice(["native", "numpy"], rounds=1, warmups={"native": 1, "numpy": 0})
    times = iter([100.0, 1.0, 1.0, 2.0])  # native's first call is slow (a cold start)
    while not choice.decided:
        choice.record(choice.next(), next(times))
    assert choice.winner == "native" and choice.samples == {"native": [1.0], "numpy": [1.0, 2.0]}


def test_medians_ignore_one_outlier():
    choice = TierChoice(["native", "numpy"], rounds=3, warmups={"native": 0, "numpy": 0}, drop_ratio=100)
    times = {"native": iter([1.0, 9.0, 1.0]), "numpy": iter([2.0, 2.0, 2.0])}
    while not choice.decided:
        name = choice.next()
        choice.record(name, next(times[name]))
    assert choice.winner == "native"


def test_a_much_slower_candidate_leaves_the_race_early():
    choice = TierChoice(["native", "numpy", "eager"], rounds=3, warmups={"native": 0, "numpy": 0, "eager": 0})
    ran = run(choice, {"native": 1.0, "numpy": 1.1, "eager": 10.0})
    assert ran.count("eager") == 1 and choice.dropped == {"eager": 10.0}
    assert choice.winner == "native" and "eager 10.0 s" not in choice.summary()
    assert "eager" in choice.summary() and "(dropped)" in choice.summary()


def test_ties_go_to_the_earlier_candidate_and_one_candidate_is_decided_at_once():
    choice = TierChoice(["native", "numpy"], rounds=2, warmups={"native": 0, "numpy": 0})
    run(choice, {"native": 1.0, "numpy": 1.0})
    assert choice.winner == "native"
    alone = TierChoice(["numpy"])
    assert alone.decided and alone.winner == "numpy" and alone.next() == "numpy"
    with pytest.raises(ValueError):
        TierChoice([])


def test_summary_gives_each_time_and_the_choice():
    choice = TierChoice(["native", "numpy"], rounds=1, warmups={"native": 0, "numpy": 0})
    assert choice.summary() == " (measuring)"
    run(choice, {"native": 0.0172, "numpy": 0.0014})
    assert choice.summary() == "native 17.2 ms (dropped), numpy 1.40 ms -> numpy"


class FakeClock:
    """A clock that the candidates advance by their made-up durations."""

    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now

    def candidate(self, seconds: float, value):
        def run(*args):
            self.now += seconds
            return value
        return run


def tiered(clock, *, upper=1.0, first=2.0, eager=3.0, recheck_calls=1000, build=None):
    tier = Tier("native", None, lambda: None)
    built = build or (lambda inputs: clock.candidate(upper, "native"))
    return TieredFunction(clock.candidate(first, "numpy"), "numpy", tier, built, 0.0, "g",
                          eager=clock.candidate(eager, "eager"), rounds=3, recheck_calls=recheck_calls, clock=clock)


@pytest.mark.parametrize("times, winner", [((1.0, 2.0, 3.0), "native"), ((5.0, 2.0, 3.0), "numpy"),
                                           ((5.0, 4.0, 3.0), "eager")])
def test_the_tiered_function_keeps_whichever_is_fastest_eager_included(times, winner):
    clock = FakeClock()
    upper, first, eager = times
    function = tiered(clock, upper=upper, first=first, eager=eager)
    assert function.wait(timeout=30)
    results = [function() for _ in range(15)]
    assert function.decided and function.backend_name == winner
    assert results[-1] == winner and set(results) <= {"native", "numpy", "eager"}
    assert function.measurement().endswith(f"-> {winner}") or f"-> {winner};" in function.measurement()


def test_a_failed_build_still_chooses_between_the_first_tier_and_eager():
    clock = FakeClock()

    def broken(inputs):
        raise RuntimeError("cc: internal error")

    function = tiered(clock, first=2.0, eager=1.0, build=broken)
    assert function.wait(timeout=30)
    for _ in range(10):
        function()
    assert function.build_error == "RuntimeError: cc: internal error"
    assert function.decided and function.backend_name == "eager" and "native" not in function.choice.names


def test_the_choice_is_measured_again_after_recheck_calls():
    clock = FakeClock()
    function = tiered(clock, upper=1.0, first=2.0, eager=3.0, recheck_calls=5)
    function.wait(timeout=30)
    while not function.decided:
        function()
    assert function.backend_name == "native"
    function.candidates["numpy"] = clock.candidate(0.5, "numpy")  # the load on the machine changed
    assert [function() for _ in range(5)] == ["native"] * 5  # the calls before the recheck
    assert function() == "native" and not function.decided  # a new measurement, no warm-ups now
    while not function.decided:
        function()
    assert function.backend_name == "numpy" and function.choice.dropped.keys() == {"native", "eager"}
    assert function._calls_left == 10  # the next recheck comes twice as late


def test_no_measuring_before_the_graph_is_hot():
    clock = FakeClock()
    tier = Tier("native", None, lambda: None)
    function = TieredFunction(clock.candidate(1.0, "numpy"), "numpy", tier, lambda inputs: clock.candidate(0.5, "native"),
                              10.0, "g", eager=clock.candidate(3.0, "eager"), clock=clock)
    assert [function() for _ in range(9)] == ["numpy"] * 9
    assert function.choice is None and not function.wait(timeout=0)


class Sized:
    """An argument with sizes, as a tensor has."""

    def __init__(self, *sizes):
        self._sizes = sizes


def test_only_calls_with_the_first_measured_sizes_are_counted():
    clock = FakeClock()
    tier = Tier("native", None, lambda: None)
    small, large = Sized(2), Sized(1000)

    def candidate(name, per_element):
        def run(x):
            clock.now += per_element * x._sizes[0]
            return name
        return run

    # numpy is faster per element; native would look faster on the small input, which is not counted.
    function = TieredFunction(candidate("numpy", 1.0), "numpy", tier, lambda inputs: candidate("native", 2.0), 0.0, "g",
                              eager=None, rounds=3, clock=clock)
    function.wait(timeout=30)
    calls = 0
    while not function.decided and calls < 200:
        function(small if calls % 3 == 2 else large)  # the first measured call has the large input
        calls += 1
    assert function.decided and function.backend_name == "numpy"
    assert set(function.choice.samples["native"]) == {2000.0} and set(function.choice.samples["numpy"]) == {1000.0}


def test_sizes_that_keep_changing_end_the_measurement_on_what_was_counted(monkeypatch):
    from dynamo_lite.backends import tiered as tiered_module
    monkeypatch.setattr(tiered_module, "MAX_SKIPPED", 5)
    clock = FakeClock()
    function = tiered(clock, upper=1.0, first=2.0, eager=3.0)
    function.wait(timeout=30)
    for n in range(40):  # never the same sizes twice
        function(Sized(n))
        if function.decided:
            break
    assert function.decided and function._skipped == 5
