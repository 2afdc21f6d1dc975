"""What add_graph shows: the graphs dynamo_lite captures for one call, the tensors between them, and module scopes.

NOTE: [module scopes of captured ops] Captured nodes do not record which module's forward
made them, so ``capture`` finds out by running the model once eagerly first: forward
pre/post hooks keep a stack of module scopes (``Net/Sequential[body]/Linear[0]``) and a
recording tracer (``ops/dispatch.py`` hands every op to ``TRACING.tracer.record``) notes the
scope of each op as it runs it. The captured graphs' op sequence is then aligned with the
eager one (``difflib``, by op name): matched nodes take the eager op's scope, the others the
scope of the parameters they read, else the innermost scope their inputs share. Both runs
happen in eval mode under ``no_grad`` (like torch's add_graph), and the RNG state is restored
after each, so logging a graph does not change training.
"""
from __future__ import annotations

import difflib
import inspect
from dataclasses import dataclass, field

from ...autograd.grad_mode import no_grad
from ...backends.registry import resolve_backend
from ...frames.explain import explain
from ...graph import Node
from ...nn.module import Module
from ...ops.core.dispatch import TRACING, dispatch
from ...ops.random.random_factories import get_rng_state, set_rng_state

OP_NODES = ("call_function", "call_method", "call_module")


def op_name(target) -> str:
    """The short name of a node's target (``linear`` for ``dl.ops.linear``, ``getitem`` for operator.getitem)."""
    name = getattr(target, "name", None)
    if isinstance(name, str):
        return name
    return getattr(target, "__name__", None) or str(target)


class ScopeRecorder:
    """A tracer for eager runs: runs each op for real and notes ``(op name, module scope)``."""

    def __init__(self, root: str):
        self.stack = [root]
        self.ops: list = []

    def enter_hook(self, scope: str):
        def enter(module, args):
            self.stack.append(scope)  # returns None: the arguments stay as they are
        return enter

    def exit_hook(self, module, args, output):
        self.stack.pop()  # returns None: the output stays as it is

    def record(self, op, args, kwargs):
        self.ops.append((op_name(op), self.stack[-1]))
        TRACING.tracer = None
        try:
            return dispatch(op, args, kwargs)
        finally:
            TRACING.tracer = self


def module_scopes(model, root: str) -> dict:
    """Qualified module name -> scope: ``""`` -> ``Net``, ``"body.0"`` -> ``Net/Sequential[body]/Linear[0]``."""
    scopes = {"": root}
    if isinstance(model, Module):
        for name, module in model.named_modules():
            if name:
                parent, _, leaf = name.rpartition(".")
                scopes[name] = f"{scopes[parent]}/{type(module).__name__}[{leaf}]"
    return scopes


class _RngRestored:
    def __enter__(self):
        self.state = get_rng_state()

    def __exit__(self, *exc):
        set_rng_state(self.state)


def eager_scopes(model, args: tuple, scopes: dict) -> list:
    """``(op name, scope)`` of every op one eager call of ``model`` runs."""
    recorder = ScopeRecorder(scopes[""])
    if not isinstance(model, Module) or len(scopes) == 1:
        return []
    handles = []
    for name, module in model.named_modules():
        if name:
            scope = scopes[name]
            handles.append(module.register_forward_pre_hook(recorder.enter_hook(scope)))
            handles.append(module.register_forward_hook(recorder.exit_hook))
    previous = TRACING.tracer
    TRACING.tracer = recorder
    try:
        model(*args)
    finally:
        TRACING.tracer = previous
        for handle in handles:
            handle.remove()
    return recorder.ops


class RecordingBackend:
    """The eager backend, noting the tensors each compiled graph received and returned on its first call."""

    def __init__(self):
        self.compiler, _ = resolve_backend("eager")
        self.calls: dict = {}  # id(graph module) -> (inputs, outputs)
        self.keep: list = []  # holds the graphs and tensors so their ids stay unique

    def __call__(self, gm, example_inputs):
        function = self.compiler(gm, example_inputs)
        calls, keep = self.calls, self.keep

        def run(*args):
            result = function(*args)
            if id(gm) not in calls:
                keep.append((gm, args, result))
                calls[id(gm)] = (list(args), list(result) if isinstance(result, (tuple, list)) else [result])
            return result

        return run


@dataclass
class Capture:
    """Graphs and breaks of one call in execution order, with what add_graph needs to draw them.

    Attributes:
        segments: ``("graph", graph_module)`` and ``("break", BreakReason)`` in order.
        scopes: qualified module name -> scope string; ``scopes[""]`` is the root.
        node_scopes: id(node) -> scope of each op node that could be placed.
        parameters: id(tensor) -> qualified name of the model's parameters and buffers.
        calls: id(graph module) -> (input tensors, output tensors) of its first call.
        inputs: the model's input tensors; outputs: what it returned, flattened.
    """

    segments: list = field(default_factory=list)
    scopes: dict = field(default_factory=dict)
    node_scopes: dict = field(default_factory=dict)
    parameters: dict = field(default_factory=dict)
    calls: dict = field(default_factory=dict)
    inputs: list = field(default_factory=list)
    outputs: list = field(default_factory=list)
    keep: list = field(default_factory=list)  # the tensors behind the ids in ``calls``
    input_names: list = field(default_factory=list)  # the model's parameter names, where known

    @property
    def graphs(self) -> list:
        return [item for kind, item in self.segments if kind == "graph"]


def flatten(value) -> list:
    """The leaves of nested tuples, lists and dict values, in order."""
    if isinstance(value, (tuple, list)):
        return [leaf for item in value for leaf in flatten(item)]
    if isinstance(value, dict):
        return [leaf for item in value.values() for leaf in flatten(item)]
    return [value]


def _segments(report) -> list:
    segments, placed = [], set()
    for frame in report.frames:
        segments.extend(("graph", gm) for gm in frame.report.graphs)
        for reason in frame.report.break_reasons:
            segments.append(("break", reason))
            placed.add(id(reason))
    # Fallbacks of the whole call (internal compiler errors) belong to no translation.
    segments.extend(("break", r) for r in report.break_reasons if id(r) not in placed)
    return segments


def parameter_scope(gm, node, capture: Capture) -> str | None:
    """The scope of the module owning the parameter/buffer a get_attr node reads (None for other nodes)."""
    if node.op != "get_attr":
        return None
    name = capture.parameters.get(id(gm.get_attribute(node.target)))
    if name is None:
        return None
    return capture.scopes.get(name.rpartition(".")[0], capture.scopes[""])


def _common_scope(scopes: list, root: str) -> str:
    if not scopes:
        return root
    parts = [s.split("/") for s in scopes]
    common = []
    for level in zip(*parts):
        if len(set(level)) != 1:
            break
        common.append(level[0])
    return "/".join(common) or root


def place_nodes(capture: Capture, eager_ops: list) -> None:
    """Fill ``capture.node_scopes`` (NOTE: [module scopes of captured ops])."""
    nodes = [(gm, n) for gm in capture.graphs for n in gm.graph.nodes if n.op in OP_NODES]
    matcher = difflib.SequenceMatcher(None, [name for name, _ in eager_ops], [op_name(n.target) for _, n in nodes],
                                      autojunk=False)
    for block in matcher.get_matching_blocks():
        for k in range(block.size):
            capture.node_scopes[id(nodes[block.b + k][1])] = eager_ops[block.a + k][1]
    root = capture.scopes[""]
    for gm, node in nodes:
        if id(node) in capture.node_scopes:
            continue
        inputs = [a for a in flatten((node.args, node.kwargs)) if isinstance(a, Node)]
        from_params = [s for s in (parameter_scope(gm, a, capture) for a in inputs) if s is not None]
        from_inputs = [capture.node_scopes[id(a)] for a in inputs if id(a) in capture.node_scopes]
        capture.node_scopes[id(node)] = _common_scope(from_params or from_inputs, root)


def _parameter_names(model) -> list:
    """The names of ``model``'s (or its forward's) positional parameters, [] if they cannot be read."""
    try:
        signature = inspect.signature(model.forward if isinstance(model, Module) else model)
    except (TypeError, ValueError):
        return []
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return [p.name for p in signature.parameters.values() if p.kind in kinds]


def capture(model, args: tuple, root: str | None = None) -> Capture:
    """Explain one call ``model(*args)`` with the eager backend and collect what add_graph draws."""
    root = root or (type(model).__name__ if isinstance(model, Module) else getattr(model, "__name__", "model"))
    result = Capture(scopes=module_scopes(model, root), inputs=list(args), input_names=_parameter_names(model))
    if isinstance(model, Module):
        result.parameters = {id(t): name for name, t in [*model.named_parameters(), *model.named_buffers()]}
    # Each module's own flag is put back (a frozen BatchNorm may be in eval in a training model).
    modes = [(m, m.training) for m in model.modules()] if isinstance(model, Module) else []
    if isinstance(model, Module):
        model.eval()
    backend = RecordingBackend()
    try:
        with no_grad():
            with _RngRestored():
                eager_ops = eager_scopes(model, args, result.scopes)
            with _RngRestored():
                report = explain(model, backend=backend)(*args)
    finally:
        for module, training in modes:
            module.training = training
    result.segments = _segments(report)
    result.calls = backend.calls
    result.outputs = flatten(report.result)
    result.keep = backend.keep
    place_nodes(result, eager_ops)
    return result
