"""``dynamo-lite demo --train``: both models train eagerly and compiled, with matching curves and counters."""
from __future__ import annotations

import io
import re

import pytest

from dynamo_lite import cli, demo_train
from dynamo_lite.backends.native.blas_threads import blas_threads, set_blas_threads
from dynamo_lite.demo_train import SPARK, sparkline


def test_demo_train_runs_both_models_and_their_curves_agree(capsys, tmp_path):
    png = tmp_path / "curves.png"
    blas_before = blas_threads()
    if blas_before is not None:
        set_blas_threads(1)  # pinned apart from the kernel threads, as OPENBLAS_NUM_THREADS=1 does
    assert cli.main(["demo", "--train", "--steps", "12", "--backend", "eager", "--threads", "2", "--png", str(png)]) == 0
    if blas_before is not None:
        assert blas_threads() == 1, "the demo left NumPy's BLAS on another thread count"
        set_blas_threads(blas_before)
    out = capsys.readouterr().out
    for name in ("gpt", "small_cnn"):
        assert re.search(rf"^{name}: .*AdamW, 12 steps$", out, re.M), out
    assert out.count("curves agree") == 2 and out.count("compilation ok") == 2, out
    # One graph break per run (backward), no fallback: the optimizer's step was compiled.
    assert len(re.findall(r"compiled: [1-9]\d* graphs, 1 graph breaks, \d+ recompiles, 0 eager fallbacks", out)) == 2
    assert len(re.findall(rf"loss +(eager|compiled) +[\d.]+ -> [\d.]+  [{SPARK}]{{12}}$", out, re.M)) == 4, out
    assert len(re.findall(r"\[#{30}\] +12/12", out)) == 4, out  # the finished progress bars
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        assert not png.exists() and "matplotlib is not installed" in out
    else:
        assert png.stat().st_size > 0


def test_demo_train_reports_a_mismatch(monkeypatch, capsys):
    """A compiled run that diverged from eager fails the demo (exit status 1)."""
    real = demo_train.make_train_step

    def diverging(task, model, optimizer):
        step = real(task, model, optimizer)
        if not diverging.calls:
            diverging.calls.append(1)  # the eager run: unchanged
            return step
        return lambda x, y: step(x, y) * 2
    diverging.calls = []
    monkeypatch.setattr(demo_train, "make_train_step", diverging)
    assert cli.main(["demo", "--train", "--steps", "3", "--tasks", "small_cnn", "--backend", "eager"]) == 1
    assert "curves DIFFER" in capsys.readouterr().out


def test_demo_train_rejects_bad_arguments(capsys):
    for args, message in ((["--tasks", "nope"], "argument --tasks: unknown task 'nope'"),
                          (["--steps", "1"], "argument --steps: expected at least 2, got 1")):
        with pytest.raises(SystemExit) as exit_:
            cli.main(["demo", "--train", *args])
        assert exit_.value.code == 2  # a usage error, one line
        err = capsys.readouterr().err
        assert message in err and len(err.splitlines()) == 1


def test_sparkline_and_progress_bar():
    assert sparkline([3.0, 2.0, 1.0, 0.0]) == "█▆▃▁"
    assert sparkline([1.0] * 100, width=10) == "▁" * 10
    out = io.StringIO()
    demo_train.progress("eager", 5, 10, 0.0, out)
    assert out.getvalue() == ""  # not a terminal: only the finished bar is written
    demo_train.progress("eager", 10, 10, 0.0, out)
    assert out.getvalue().startswith("\r  eager     [" + "#" * 30 + "]   10/10") and out.getvalue().endswith("\n")
