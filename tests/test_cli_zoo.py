"""The ``dynamo-lite`` command end to end on every workload of the model zoo (demo, --train, explain, report)."""
import os
import subprocess
import sys
import textwrap

import pytest

from dynamo_lite import cli
from tests.helpers import native_skip_reason

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORKLOADS = list(cli.load_zoo()[0].WORKLOADS)


def _run_cli(*args, timeout=600):
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-m", "dynamo_lite", *args], capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT, env=env)


def _table_rows(out: str) -> dict:
    return {line.split()[0]: line.split() for line in out.splitlines() if line.split() and line.split()[0] in WORKLOADS}


def test_demo_runs_every_workload_and_every_row_is_ok():
    result = _run_cli("demo", "--rounds", "1")
    assert result.returncode == 0, result.stdout + result.stderr
    rows = _table_rows(result.stdout)
    assert set(rows) == set(WORKLOADS), result.stdout
    for name, row in rows.items():
        assert row[-1] == "ok", f"{name}: {row}"
        assert int(row[1]) >= 1, f"{name} compiled no graph: {row}"


def test_bare_command_with_debug_runs_the_demo():
    result = _run_cli("--rounds", "1", "--debug", "--workloads", "gpt,tiny_fn")
    assert result.returncode == 0, result.stdout + result.stderr
    rows = _table_rows(result.stdout)
    assert set(rows) == {"gpt", "tiny_fn"} and all(row[-1] == "ok" for row in rows.values())
    assert "bytecode diff" in result.stdout


def test_demo_train_briefly():
    result = _run_cli("demo", "--train", "--steps", "3")
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.count("compilation ok") == 2, result.stdout
    assert "0 eager fallbacks" in result.stdout


SCRIPT = textwrap.dedent("""
    from dynamo_lite.cli import load_zoo

    WORKLOAD = load_zoo()[0].WORKLOADS[{name!r}]

    def main():
        model, inputs = WORKLOAD.make(), WORKLOAD.make_inputs()
        return model(*inputs)
""")


@pytest.mark.parametrize("name", WORKLOADS)
def test_explain_and_report_on_every_workload(name, tmp_path, capsys):
    path = tmp_path / f"zoo_{name}.py"
    path.write_text(SCRIPT.format(name=name))
    assert cli.main(["explain", f"{path}:main"]) == 0
    out = capsys.readouterr().out
    assert "Graph count:" in out and "internal compiler error" not in out
    page = tmp_path / "report.html"
    assert cli.main(["report", f"{path}:main", "-o", str(page)]) == 0
    assert f"wrote {page}" in capsys.readouterr().out and page.stat().st_size > 0


def test_version_prints_the_package_version():
    result = _run_cli("--version", timeout=120)
    assert result.returncode == 0 and result.stdout.strip() == f"dynamo-lite {cli.dl.__version__}"


def test_help_reads_as_plain_text_with_a_description_per_command():
    for args in (["--help"], ["demo", "--help"], ["explain", "--help"], ["report", "--help"]):
        result = _run_cli(*args, timeout=120)
        assert result.returncode == 0 and "``" not in result.stdout, result.stdout
    top = _run_cli("--help", timeout=120).stdout
    for name, (short, _) in cli.COMMANDS.items():
        assert name in top and short.split()[0] in top
    assert cli.COMMANDS["explain"][1].split(",")[0] in _run_cli("explain", "--help", timeout=120).stdout


@pytest.mark.parametrize("args, message", [
    (["demo", "--backend", "bogus"], "dynamo-lite demo: error: argument --backend: unknown backend 'bogus'"),
    (["--workloads", "nope"], "dynamo-lite demo: error: argument --workloads: unknown workload 'nope'"),
    (["demo", "--rounds", "0"], "dynamo-lite demo: error: argument --rounds: expected at least 1, got 0"),
    (["demo", "--train", "--tasks", "gpt,nope"], "argument --tasks: unknown task 'nope'"),
    (["explain"], "dynamo-lite explain: error: the following arguments are required: target"),
    (["report", "x.py", "--backend", "bogus"], "unknown backend 'bogus'"),
])
def test_bad_arguments_are_one_line_usage_errors(args, message):
    result = _run_cli(*args, timeout=120)
    assert result.returncode == 2 and result.stdout == ""
    assert len(result.stderr.splitlines()) == 1 and message in result.stderr, result.stderr
    assert "Traceback" not in result.stderr


def test_debug_names_the_numpy_backend_whose_code_it_shows():
    result = _run_cli("demo", "--workloads", "tiny_fn", "--rounds", "1", "--debug", "--backend", "numpy")
    assert result.returncode == 0, result.stderr
    assert "graph 0 runs on backend 'numpy'; its code: the generated NumPy function" in result.stdout
    assert "native kernel" not in result.stdout


@pytest.mark.skipif(native_skip_reason() is not None, reason=f"native: {native_skip_reason()}")
@pytest.mark.parametrize("backend", ["native", "auto"])
def test_debug_names_the_backend_whose_code_it_shows(backend):
    # gpt's graph is hot enough for auto to build its C tier: the heading names the tier whose code is shown.
    result = _run_cli("demo", "--workloads", "gpt", "--rounds", "3", "--debug", "--backend", backend)
    assert result.returncode == 0, result.stderr
    heading = next(line for line in result.stdout.splitlines() if "graph 0 runs on backend" in line)
    if "native kernel dl_" in result.stdout:  # the code shown is native's, and the heading says so
        assert "the generated Python function (its kernel lines call C kernels)" in heading
        assert "runs on backend 'native'; its code" in heading or (
            backend == "auto" and "runs on backend 'numpy'; the code 'native' built for it (measured, not chosen)" in heading)
    else:
        assert backend == "auto" and "'numpy'; its code: the generated NumPy function" in heading


def test_train_table_says_which_way_is_better():
    result = _run_cli("demo", "--train", "--steps", "2", "--tasks", "small_cnn")
    assert result.returncode == 0, result.stderr
    assert "compiled/eager step time" in result.stdout and "(lower is better)" in result.stdout
