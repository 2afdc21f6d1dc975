"""The clock the tier choice times candidates with (NOTE: [measuring clock])."""
from __future__ import annotations

import time

import pytest

import dynamo_lite as dl
from dynamo_lite.backends.native.blas_threads import blas_threads
from dynamo_lite.backends.native.call_clock import measuring_clock
from dynamo_lite.backends.tiered import Tier, TieredFunction


@pytest.fixture
def restore_threads():
    previous = dl.get_num_threads()
    yield
    dl.set_num_threads(previous)


def test_one_thread_is_timed_by_thread_cpu_time(restore_threads):
    dl.set_num_threads(1)
    if blas_threads() != 1:
        pytest.skip("NumPy's BLAS thread count is not known here")
    assert measuring_clock() is time.thread_time


def test_several_threads_are_timed_by_wall_time(restore_threads):
    dl.set_num_threads(2)
    assert measuring_clock() is time.perf_counter


def test_a_tiered_function_times_measured_calls_with_its_tiers_clock():
    readings = []

    def clock():
        readings.append(len(readings))
        return float(len(readings))

    tier = Tier("native", None, lambda: None, clock=lambda: clock)
    function = TieredFunction(lambda x: x, "numpy", tier, lambda inputs: (lambda x: x), 0.0, "g",
                              eager=lambda x: x, rounds=1)
    function.wait()
    while not function.decided:
        function(1)
    assert readings  # every measured call read the tier's clock, twice
    assert len(readings) % 2 == 0 and function.choice.medians()


def test_explain_says_when_the_times_are_thread_cpu_time(restore_threads):
    dl.set_num_threads(1)
    if blas_threads() != 1:
        pytest.skip("NumPy's BLAS thread count is not known here")
    tier = Tier("native", None, lambda: None, clock=measuring_clock)
    function = TieredFunction(lambda x: x, "numpy", tier, lambda inputs: (lambda x: x), 0.0, "g",
                              eager=lambda x: x, rounds=1)
    function.wait()
    while not function.decided:
        function(1)
    assert function.measurement().endswith("; thread CPU time")
