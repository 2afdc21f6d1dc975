"""The ``dynamo-lite`` command end to end on every workload of the model zoo (demo, --train, explain, report)."""
import os
import subprocess
import sys
import textwrap

import pytest

from dynamo_lite import cli

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
