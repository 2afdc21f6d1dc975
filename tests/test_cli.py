"""The ``dynamo-lite`` command: demo table, --debug extras, explain of a function and of a script, report."""
import json
import subprocess
import sys
import textwrap

import pytest

from dynamo_lite import cli


def test_demo_prints_the_table_and_checks_against_eager(capsys):
    assert cli.main(["demo", "--workloads", "tiny_fn,lstm_cell", "--rounds", "1"]) == 0
    out = capsys.readouterr().out
    header = next(line for line in out.splitlines() if line.startswith("workload"))
    assert header.split() == ["workload", "graphs", "compile", "ms", "eager", "ms", "compiled", "ms", "speedup", "check"]
    rows = {line.split()[0]: line.split() for line in out.splitlines() if line.split() and line.split()[0] in ("tiny_fn", "lstm_cell")}
    assert set(rows) == {"tiny_fn", "lstm_cell"}
    for row in rows.values():
        assert row[1] == "1" and row[-1] == "ok" and row[-2].endswith("x")
    assert "(numpy" in out  # "auto" chose the numpy backend on CPU (and names its upper tier)


def test_demo_is_the_default_command_and_debug_shows_code(capsys):
    assert cli.main(["--workloads", "tiny_fn", "--rounds", "1", "--debug"]) == 0
    out = capsys.readouterr().out
    assert "bytecode diff" in out and "LOAD_CONST" in out
    assert "graph 0 runs on backend 'numpy'; its code: the generated NumPy function" in out
    assert "def forward(x):" in out and "_np_add" in out


def test_demo_rejects_unknown_workloads(capsys):
    with pytest.raises(SystemExit) as exit_:
        cli.main(["demo", "--workloads", "nope"])
    assert exit_.value.code == 2
    assert "unknown workload 'nope'" in capsys.readouterr().err


SCRIPT = textwrap.dedent("""
    import dynamo_lite as dl

    SCALE = 3.0

    def helper(t):
        return (t * SCALE).relu()

    def main():
        x = dl.ones(2, 2)
        y = helper(x) + 1
        print("value", y.sum().item())
        return y.exp()

    if __name__ == "__main__":
        main()
""")


def test_explain_a_function_taking_no_arguments(tmp_path, capsys):
    path = tmp_path / "prog.py"
    path.write_text(SCRIPT)
    assert cli.main(["explain", f"{path}:main", "--backend", "numpy", "--code"]) == 0
    out = capsys.readouterr().out
    assert "value 16.0" in out
    assert "Graph count: 2" in out and "Graph break count: 1" in out  # print() breaks; item() stays in the graph
    line = SCRIPT.splitlines().index('    print("value", y.sum().item())') + 1
    assert f"{path}:{line}" in out  # the break's reason points at the script's line
    assert "Generated code of graph 0" in out


def test_explain_a_main_style_script(tmp_path, capsys):
    path = tmp_path / "prog.py"
    path.write_text(SCRIPT)
    assert cli.main(["explain", str(path)]) == 0
    out = capsys.readouterr().out
    assert "value 16.0" in out  # the script's __main__ block ran
    assert "Graph count: 2" in out and "ops_relu" in out


def test_explain_reports_a_missing_function(tmp_path, capsys):
    path = tmp_path / "prog.py"
    path.write_text(SCRIPT)
    assert cli.main(["explain", f"{path}:nope"]) == 2
    assert "no function 'nope'" in capsys.readouterr().err


def test_explain_prints_the_rewritten_code(tmp_path, capsys):
    path = tmp_path / "prog.py"
    path.write_text(SCRIPT)
    assert cli.main(["explain", f"{path}:main"]) == 0
    out = capsys.readouterr().out
    assert "Rewritten code of main:" in out and "def main():  # rewritten by dynamo_lite" in out
    assert "__compiled_graph_0()" in out


def test_report_writes_the_html_page(tmp_path, capsys):
    path = tmp_path / "prog.py"
    path.write_text(SCRIPT)
    page = tmp_path / "out.html"
    assert cli.main(["report", f"{path}:main", "-o", str(page)]) == 0
    assert f"wrote {page}" in capsys.readouterr().out
    text = page.read_text()
    assert text.count("<svg") == 2 and "print(&quot;value&quot;, y.sum().item())" in text


@pytest.mark.parametrize("body, message", [
    ("def main():\n    raise ValueError('bad input')\n", "raised ValueError: bad input; no report written"),
    ("def main():\n    return 1 + 2\n", "has no compilable function"),
])
def test_report_fails_clearly(tmp_path, capsys, body, message):
    path = tmp_path / "prog.py"
    path.write_text(body)
    page = tmp_path / "out.html"
    assert cli.main(["report", f"{path}:main", "-o", str(page)]) == 1
    assert message in capsys.readouterr().err and not page.exists()


def test_python_dash_m_runs_the_same_command():
    result = subprocess.run([sys.executable, "-m", "dynamo_lite", "demo", "--workloads", "tiny_fn", "--rounds", "1"],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "tiny_fn" in result.stdout and " ok" in result.stdout


def test_benchmark_run_writes_json(tmp_path, capsys):
    run = pytest.importorskip("benchmarks.run")
    out_file = tmp_path / "results.json"
    assert run.main(["--workloads", "tiny_fn,pointwise_chain", "--rounds", "1", "--target-ms", "1", "--no-torch",
                     "--json", str(out_file)]) == 0
    payload = json.loads(out_file.read_text())
    assert set(payload["results"]) == {"tiny_fn", "pointwise_chain"}
    chain = payload["results"]["pointwise_chain"]
    assert set(chain["median_ms"]) == {"eager", "compiled", "numpy"} and chain["ratios"]["compiled/eager"] > 0
    assert any(t["target"].startswith("tiny_fn") for t in payload["targets"])
    assert "targets:" in capsys.readouterr().out
