"""The dynamo-lite command: demo (compile the model zoo, check it, time it), explain and report.

Usage:
    dynamo-lite [demo] [--debug] [--backend NAME] [--workloads a,b] [--rounds N]
    dynamo-lite demo --train [--steps N] [--tasks gpt,small_cnn] [--backend NAME] [--threads N] [--png FILE]
    dynamo-lite explain path/to/script.py[:function] [--backend NAME]
    dynamo-lite report path/to/script.py[:function] [-o report.html] [--backend NAME] [--graphviz]
"""
from __future__ import annotations

import argparse
import ast
import importlib
import importlib.util
import os
import sys
import types

import numpy as np

import dynamo_lite as dl
from dynamo_lite.backends.registry import upper_tier
from dynamo_lite.demo_train import TASKS, demo_train


def load_zoo():
    """``(models, timing)``: the benchmark model zoo and the interleaved timer.

    Installed, the repository's ``benchmarks/`` is ``dynamo_lite.benchmarks``; from a source
    checkout it is the folder beside the package.
    """
    try:
        return importlib.import_module("dynamo_lite.benchmarks.models"), importlib.import_module("dynamo_lite.benchmarks.timing")
    except ImportError:
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        if not os.path.isfile(os.path.join(root, "benchmarks", "models.py")):
            raise
        if root not in sys.path:
            sys.path.insert(0, root)
        return importlib.import_module("benchmarks.models"), importlib.import_module("benchmarks.timing")


# -- demo -------------------------------------------------------------------------------------
def _outputs_match(expected, actual, rtol: float, atol: float) -> bool:
    """Whether two model outputs agree: tensors within tolerance, containers item by item, the rest by ``==``."""
    if isinstance(expected, dl.Tensor) or isinstance(actual, dl.Tensor):
        if not (isinstance(expected, dl.Tensor) and isinstance(actual, dl.Tensor)):
            return False
        if expected.shape != actual.shape or expected.dtype != actual.dtype:
            return False
        return bool(np.allclose(actual.detach().numpy(), expected.detach().numpy(), rtol=rtol, atol=atol))
    if isinstance(expected, (tuple, list)):
        return (type(expected) is type(actual) and len(expected) == len(actual)
                and all(_outputs_match(e, a, rtol, atol) for e, a in zip(expected, actual)))
    if isinstance(expected, dict):
        return (isinstance(actual, dict) and expected.keys() == actual.keys()
                and all(_outputs_match(expected[k], actual[k], rtol, atol) for k in expected))
    return type(expected) is type(actual) and expected == actual


def check_against_eager(workload, compiled, model, inputs) -> str:
    """``"ok"`` if the compiled outputs match eager's within the workload's tolerance."""
    expected, actual = model(*inputs), compiled(*inputs)
    return "ok" if _outputs_match(expected, actual, workload.rtol, workload.atol) else "MISMATCH"


def demo(args) -> int:
    """Compile every zoo workload with the best backend, check it against eager, time both."""
    models, timing = load_zoo()
    if args.train:
        return demo_train(models, args.steps, args.backend, args.tasks.split(","), args.png, args.threads,
                          logdir=args.logdir)
    names = args.workloads.split(",") if args.workloads else list(models.WORKLOADS)
    backend = args.backend
    chosen = dl.backends.AUTO.choose([]) if backend == "auto" else backend
    tier = upper_tier(chosen) if backend == "auto" else None
    chosen += f"; {tier} tried once a graph is hot" if tier else ""
    print(f"dynamo_lite demo: backend {backend!r} ({chosen}), Python {sys.version.split()[0]}, NumPy {np.__version__}, "
          f"{os.cpu_count()} CPUs; medians of {args.rounds} interleaved rounds")
    header = f"{'workload':26s} {'graphs':>6s} {'compile ms':>10s} {'eager ms':>10s} {'compiled ms':>11s} {'speedup':>8s}  check"
    print(header)
    print("-" * len(header))
    failures, debug_shown = 0, False
    for name in names:
        workload = models.WORKLOADS[name]
        model, inputs = workload.make(), workload.make_inputs()
        dl.reset()
        report = dl.explain(model, backend=backend)(*inputs)
        compiled = dl.compile(model, backend=backend)
        check = check_against_eager(workload, compiled, model, inputs)
        failures += check != "ok"
        medians = timing.measure({"eager": lambda: model(*inputs), "compiled": lambda: compiled(*inputs)},
                                 rounds=args.rounds)
        eager_s, compiled_s = medians["eager"].median, medians["compiled"].median
        print(f"{name:26s} {report.graph_count:6d} {sum(report.compile_times) * 1e3:10.1f} {eager_s * 1e3:10.3f} "
              f"{compiled_s * 1e3:11.3f} {eager_s / compiled_s:7.2f}x  {check}")
        if args.debug and not debug_shown and report.graphs:
            debug_shown = _show_debug(name, report)
    dl.reset()
    print("speedup = eager ms / compiled ms; check = compiled outputs equal eager's within the workload's tolerance")
    return 1 if failures else 0


#: What each backend's ``gm.backend_code`` holds, for the --debug heading.
BACKEND_CODE = {
    "numpy": "the generated NumPy function",
    "native": "the generated Python function (its kernel lines call C kernels), then the C source of those kernels",
    "cupy": "the generated Python function, then the CUDA kernels it launches",
}


def _show_debug(name: str, report) -> bool:
    print(f"\n---- {name}: bytecode diff (original vs transformed) ----")
    print(report.bytecode_diffs[0] if report.bytecode_diffs else "(none)")
    gm = report.graphs[0]
    function = report.compiled.get(id(gm), (None, None, None))[1]
    if hasattr(function, "wait"):  # a tier build under way: let it finish, so name and code agree
        function.wait(120)
    runs = report.backend_of(gm)
    code = getattr(gm, "backend_code", None)
    # The code is the last backend's that compiled the graph: auto may have built native, measured it
    # slower and kept numpy. Name whose code it is.
    made_by = "native" if code and "# native kernel" in code else runs
    whose = "its code" if made_by == runs else f"the code {made_by!r} built for it (measured, not chosen)"
    print(f"---- {name}: graph 0 runs on backend {runs!r}; {whose}: "
          f"{BACKEND_CODE.get(made_by, 'what the backend generated') if code else 'none (this backend generates no code)'} ----")
    if code:
        print(code.rstrip("\n"))
    print()
    return True


# -- explain ----------------------------------------------------------------------------------
def _load_module(path: str) -> types.ModuleType:
    """Import a file as a module that is not ``__main__`` (its ``if __name__ == ...`` block stays idle)."""
    name = "_dynamo_lite_explain_" + os.path.splitext(os.path.basename(path))[0].replace("-", "_")
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"cannot load {path!r} as Python source")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


_DEFINITIONS = (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _read_names(nodes) -> set:
    return {n.id for node in nodes for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _assigned_names(statement) -> set:
    targets = getattr(statement, "targets", None) or [getattr(statement, "target", None)]
    return {n.id for t in targets if t is not None for n in ast.walk(t) if isinstance(n, ast.Name)}


def script_as_function(path: str):
    """A script's top-level work as the body of a function taking no arguments.

    The translator captures function frames, so the script's statements become the body
    of one function (line numbers kept: reasons point into the script), run with
    ``__name__ == "__main__"`` as by ``python script.py``. Imports, function and class
    definitions, and assignments of names those definitions read as globals stay at
    module level, where the script's own functions expect them.
    """
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), filename=path)
    definitions = [s for s in tree.body if isinstance(s, _DEFINITIONS[2:])]
    globals_read = _read_names(definitions)
    hoisted, body = [], []
    for statement in tree.body:
        if isinstance(statement, _DEFINITIONS) or (
            isinstance(statement, (ast.Assign, ast.AnnAssign)) and _assigned_names(statement) & globals_read
        ):
            hoisted.append(statement)
        else:
            body.append(statement)
    fields = {"type_params": []} if "type_params" in ast.FunctionDef._fields else {}  # 3.12+
    no_arguments = ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[], defaults=[])
    function = ast.FunctionDef(name="__main__", args=no_arguments, body=body or [ast.Pass()], decorator_list=[],
                               returns=None, **fields)
    module = ast.Module(body=hoisted + [function], type_ignores=[])
    ast.fix_missing_locations(module)
    namespace = {"__name__": "__main__", "__file__": os.path.abspath(path), "__builtins__": __builtins__}
    exec(compile(module, path, "exec"), namespace)
    return namespace["__main__"]


def _target_function(target: str):
    """The function ``path.py:function`` names, or a script's top-level work; a message if neither."""
    path, _, function_name = target.partition(":") if not os.path.exists(target) else (target, "", "")
    if not os.path.isfile(path):
        return None, f"no such file: {path!r}"
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    if not function_name:
        return script_as_function(path), None
    fn = getattr(_load_module(path), function_name, None)
    if not callable(fn):
        return None, f"{path} has no function {function_name!r}"
    return fn, None


def explain(args) -> int:
    """Run ``dl.explain`` on ``file.py:function`` (no arguments) or on a whole script."""
    fn, problem = _target_function(args.target)
    if problem:
        print(problem, file=sys.stderr)
        return 2
    report = dl.explain(fn, backend=args.backend)()
    print(report)
    for i, gm in enumerate(report.graphs):
        code = getattr(gm, "backend_code", None)
        if code and args.code:
            print(f"Generated code of graph {i}:\n  " + code.rstrip("\n").replace("\n", "\n  "))
    return 0


def report(args) -> int:
    """Write the HTML compile report of ``file.py:function`` or a whole script."""
    fn, problem = _target_function(args.target)
    if problem:
        print(problem, file=sys.stderr)
        return 2
    try:
        explained = dl.explain(fn, backend=args.backend)()
    except Exception as exc:  # the user's program failed: say so, write nothing
        print(f"{args.target} raised {type(exc).__name__}: {exc}; no report written", file=sys.stderr)
        return 1
    if not explained.graphs:
        print(f"{args.target} has no compilable function: nothing was captured in a graph "
              f"({len(explained.frames)} frame(s) translated); no report written", file=sys.stderr)
        return 1
    path = explained.to_html(args.output, graphviz=args.graphviz)
    print(f"wrote {path} ({os.path.getsize(path)} bytes): {explained.graph_count} graph(s), "
          f"{explained.graph_break_count} graph break(s)")
    return 0


# -- entry point ------------------------------------------------------------------------------
DESCRIPTION = ("dynamo-lite: compile the model zoo and check it against eager mode (demo), or report what the "
               "compiler captures in your own script (explain, report).")
COMMANDS = {
    "demo": ("compile the model zoo, check it against eager, print timings (the default command)",
             "Compile every workload of the model zoo with the chosen backend, check the compiled outputs "
             "against eager mode and print graphs, compile time, eager and compiled time and the speedup. "
             "With --train, train a GPT-style model and a small CNN eagerly and compiled, side by side."),
    "explain": ("print the graphs, graph breaks and guards of a function or script",
                "Run a script, or a function of it taking no arguments (path/to/script.py:function), under "
                "dl.explain and print the graphs it captured, why each graph break happened, and the guards."),
    "report": ("write a self-contained HTML compile report of a function or script",
               "Run a script, or a function of it taking no arguments, under dl.explain and write an HTML page "
               "with the source and its graph breaks, each graph drawn, the guards and the rewritten bytecode."),
}


class OneLineErrorParser(argparse.ArgumentParser):
    """An argument parser whose usage errors are one line on stderr and exit status 2."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _backend_name(value: str) -> str:
    """A registered backend name or ``auto`` (argparse type)."""
    known = ["auto", *dl.list_backends()]
    if value not in known:
        raise argparse.ArgumentTypeError(f"unknown backend {value!r}; choose from {', '.join(known)}")
    return value


def _int_at_least(low: int):
    """An argparse type: an integer of at least ``low``."""
    def parse(value: str) -> int:
        try:
            number = int(value)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer, got {value!r}") from None
        if number < low:
            raise argparse.ArgumentTypeError(f"expected at least {low}, got {number}")
        return number
    return parse


def _names_from(known, what: str):
    """An argparse type: a comma-separated list of names out of ``known`` ("" for all)."""
    def parse(value: str) -> str:
        unknown = [n for n in value.split(",") if value and n not in known]
        if unknown:
            raise argparse.ArgumentTypeError(f"unknown {what} {', '.join(map(repr, unknown))}; "
                                             f"choose from {', '.join(known)}")
        return value
    return parse


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineErrorParser(prog="dynamo-lite", description=DESCRIPTION)
    parser.add_argument("--version", action="version", version=f"dynamo-lite {dl.__version__}")
    commands = parser.add_subparsers(dest="command", metavar="{demo,explain,report}")
    parsers = {name: commands.add_parser(name, help=short, description=long)
               for name, (short, long) in COMMANDS.items()}
    _demo_options(parsers["demo"])
    for name in ("explain", "report"):
        sub = parsers[name]
        sub.add_argument("target", help="path/to/script.py:function (taking no arguments) or path/to/script.py")
        sub.add_argument("--backend", default="eager", type=_backend_name,
                         help="backend the graphs are compiled with (default: eager)")
    parsers["explain"].add_argument("--code", action="store_true", help="also print the code the backend generated")
    parsers["report"].add_argument("-o", "--output", default="report.html",
                                   help="the HTML file to write (default: report.html)")
    parsers["report"].add_argument("--graphviz", action="store_true",
                                   help="draw graphs with Graphviz's dot, if it is installed")
    return parser


def _demo_options(parser) -> None:
    workloads = list(load_zoo()[0].WORKLOADS)
    parser.add_argument("--debug", action="store_true",
                        help="also show one bytecode diff and the code the backend generated for one graph")
    parser.add_argument("--backend", default="auto", type=_backend_name,
                        help="backend name (default: auto, the best for the device)")
    parser.add_argument("--workloads", default="", type=_names_from(workloads, "workload"),
                        help=f"comma-separated workload names (default: all: {', '.join(workloads)})")
    parser.add_argument("--rounds", type=_int_at_least(1), default=7, help="interleaved timing rounds (default: 7)")
    parser.add_argument("--train", action="store_true",
                        help="train the GPT-style model and a small CNN eagerly and compiled, side by side")
    parser.add_argument("--steps", type=_int_at_least(2), default=300,
                        help="training steps per run with --train (default: 300)")
    parser.add_argument("--tasks", default=",".join(TASKS), type=_names_from(list(TASKS), "task"),
                        help=f"with --train: which models (default: {','.join(TASKS)})")
    parser.add_argument("--threads", type=_int_at_least(1), default=1, help="with --train: BLAS/kernel threads (default: 1)")
    parser.add_argument("--png", default=None, help="with --train: also plot the loss curves to this PNG file "
                                                     "(only if matplotlib is installed)")
    parser.add_argument("--logdir", default=None, help="with --train: log loss curves and the models' graphs for "
                                                        "TensorBoard there (needs the 'tensorboard' extra)")


def main(argv=None) -> int:
    """``dynamo-lite``: ``demo`` unless another command is named."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] not in ("demo", "explain", "report", "-h", "--help", "--version"):
        argv = ["demo"] + argv
    args = build_parser().parse_args(argv)
    return {"demo": demo, "explain": explain, "report": report}[args.command](args)
