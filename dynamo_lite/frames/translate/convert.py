"""convert_frame: translate one frame into a cache entry (graphs, guards, transformed code)."""
from __future__ import annotations

import time

from ...graph import GraphModule
from ...ops.autocast.state import AUTOCAST
from ...tensor.device import DEFAULT as DEFAULT_DEVICE
from ...tensor.dtype import DEFAULT as DEFAULT_DTYPE
from . import debug
from .autograd_graphs import GRAD_MODE_SOURCE, autograd_aware
from ..runtime.cache import CacheEntry
from ..bytecode.codegen import TransformedCodeBuilder
from ..runtime.context import UNBOUND, FrameRequest
from ..errors import Unsupported
from ..report import BreakReason, TranslationReport
from .graph_break import BreakPlan, log_break, raises_after_graph
from .loops import loop_entry
from .scan_loop import scan_unrolled
from ..tracing.dynamic_policy import DynamicPolicy
from ..tracing.guards import CONSTANT_MATCH, ID_MATCH, SHAPE_ENV, compile_guards
from ..tracing.shape_guards import ShapeGuard, ShapeGuardSource
from ..tracing.output_graph import OutputGraph
from ..tracing.trace_rules import is_library_code
from ..tracing.sources import AttrSource, ConstSource, FrameCellSource, LocalSource, cell_argument
from .translator import GraphBreak, InstructionTranslator
from ..tracing.variables.contexts import context_entry
from ..tracing.variables.base import CellVariable, ConstantVariable, symbolic_sizes
from ..tracing.variables.tensor import TensorVariable
from ..tracing.variables.scan_values import ScanUnfit


def convert_frame(request: FrameRequest) -> CacheEntry:
    """Trace ``request``'s frame symbolically and build the entry that replaces it.

    The frame is captured up to its return or up to its first graph break; after a
    break the transformed code runs the unsupported instruction eagerly and calls a
    resume function for the rest. When nothing useful can be captured the entry runs
    the frame eagerly, guarded by what the translation read before it gave up (a call
    that differs there is translated again). With ``fullgraph=True`` the ``Unsupported``
    is raised instead, except for errors of the user's program (a shape mismatch ...),
    which the eager run raises as they are.
    """
    rejected_scans: set = set()
    while True:
        output = OutputGraph(DynamicPolicy(request.config.dynamic, _shape_history(request)))
        output.scan_rejected = rejected_scans  # NOTE: [loops traced once]
        try:
            entry = _convert(request, output)
            break
        except ScanUnfit as unfit:  # the scanned list was used as a list: unroll that loop
            output.release()
            if unfit.loop in rejected_scans:
                raise
            rejected_scans.add(unfit.loop)
            scan_unrolled(unfit)
        except Unsupported as exc:
            entry = _fallback_entry(request, output, exc)
            break
    output.release()
    observe = getattr(request.config.backend, "observe_translation", None)
    if observe is not None:  # dl.explain's backend records every translation
        observe(request, entry)
    return entry


def _fallback_entry(request, output, exc: Unsupported) -> CacheEntry:
    """The eager entry of a frame that cannot be captured (``exc`` is raised with fullgraph,
    except for an error of the program, which the eager run raises as it is)."""
    if request.config.fullgraph and not getattr(exc, "user_error", False):
        output.release()
        raise exc
    exc.located(request.code.co_filename, request.code.co_firstlineno)
    guards = _compile_guards(output, request)
    report = TranslationReport(fallback_reason=str(exc), break_reasons=[_break_reason(exc)],
                               guards=output.guards.text(), original_code=request.code)
    return CacheEntry(guards.check, None, guards.describe_failure, request.config, report)


#: Where factories in a graph (dl.zeros ...) take their dtype from.
DEFAULT_DTYPE_SOURCE = AttrSource(ConstSource(DEFAULT_DTYPE, "dynamo_lite.tensor.dtype.DEFAULT"), "value",
                                  "dl.get_default_dtype()")
#: ... and their device (``with dl.device(...)``).
DEFAULT_DEVICE_SOURCE = AttrSource(ConstSource(DEFAULT_DEVICE, "dynamo_lite.tensor.device.DEFAULT"), "value",
                                   "dl.get_default_device()")


#: ... and which ops autocast casts (NOTE: [autocast in compiled code] in amp/autocast_mode.py).
AUTOCAST_SOURCE = AttrSource(ConstSource(AUTOCAST, "dynamo_lite.ops.autocast.state.AUTOCAST"), "key",
                             "the dl.autocast state")


def _shape_history(request):
    """The sizes earlier compiles of this frame saw (NOTE: [automatic dynamic shapes])."""
    cache = request.hook.cache_for(request.code) if request.hook is not None else None
    return cache.shape_history if cache is not None else None


def _compile_guards(output, request):
    # Factories in the graph (dl.zeros ...) use the default dtype: it is an input too.
    output.guards.add(DEFAULT_DTYPE_SOURCE, ID_MATCH, DEFAULT_DTYPE.value)
    # NOTE: [compiled graphs and autograd]; a constant match reads "dl.is_grad_enabled() == True".
    output.guards.add(GRAD_MODE_SOURCE, CONSTANT_MATCH, output.grad_enabled)
    output.guards.add(DEFAULT_DEVICE_SOURCE, CONSTANT_MATCH, DEFAULT_DEVICE.value)
    output.guards.add(AUTOCAST_SOURCE, CONSTANT_MATCH, AUTOCAST.key)
    if output.shape_env.symbols:  # last: it reads the tensors the guards above checked
        output.guards.add(ShapeGuardSource(), SHAPE_ENV, ShapeGuard(output.shape_env, output.symbolic_tensors))
    return compile_guards(output.guards, request.names, request.f_globals, request.values)


def _convert(request: FrameRequest, output: OutputGraph) -> CacheEntry:
    started = time.perf_counter()
    code = request.code
    resume_functions = request.hook.resume_functions
    tx = InstructionTranslator(code, request.f_globals, {}, output, allow_breaks=not request.config.fullgraph,
                               hook=request.hook)
    # One tracker per cell, known before the arguments are: a closure passed in may share it.
    for name, cell in zip(code.co_freevars, request.cells):
        tx.locals[name] = CellVariable(None, name, external=True, source=FrameCellSource(name))
        output.objects[id(cell)] = (cell, tx.locals[name])
    for name, value in zip(request.names, request.values):
        if value is UNBOUND:  # an empty cell: reading it raises, as in eager code
            output.guards.add(LocalSource(name), ID_MATCH, UNBOUND)
            continue
        variable = tx.wrap(value, LocalSource(name))
        if isinstance(tx.locals.get(name), CellVariable):  # a free variable, or an argument inner functions capture
            tx.locals[name].contents = variable
        else:
            tx.locals[name] = variable

    # The transformed code also gets the free variables' cells (NOTE: [cells across graph breaks]).
    builder = TransformedCodeBuilder(code, request.names + tuple(cell_argument(name) for name in code.co_freevars))
    break_reasons, plan = [], None
    try:
        returned = tx.run()
        live = [returned]
    except GraphBreak as graph_break:
        if isinstance(graph_break.reason, ScanUnfit):
            raise graph_break.reason
        loop_head = loop_entry(tx, graph_break.snapshot.index, graph_break.reason)  # NOTE: [graph breaks in loops]
        snapshot = loop_head or graph_break.snapshot
        output.rollback(snapshot.checkpoint)
        reason = graph_break.reason
        has_work = any(node.op == "call_function" for node in output.graph.nodes) or len(output.side_effects)
        with_head = None if loop_head is None and raises_after_graph(tx, snapshot, reason, has_work) \
            else context_entry(tx, snapshot.stack)  # NOTE: [user context managers]
        if with_head is not None:
            snapshot, loop_head = with_head, None
            output.rollback(snapshot.checkpoint)
            has_work = any(node.op == "call_function" for node in output.graph.nodes) or len(output.side_effects)
        callee = getattr(reason, "callee", None)
        if callee is not None and not is_library_code(callee.__code__):
            # Its own frame compiles when the eager call runs it (also when this frame
            # cannot resume and runs eagerly).
            request.hook.instrument(callee)
        plan = BreakPlan(tx, snapshot, reason, resume_functions, request.f_globals, has_work,
                         at_loop_head=loop_head is not None)
        break_reasons.append(_break_reason(reason))
        log_break(code, reason)
        live = plan.live_variables()

    try:
        graphs, backward_graphs = _emit_graph(builder, output, request, live)
        builder.materialize(live + output.side_effects.values())
        builder.begin("replay")
        output.side_effects.replay(builder)
        if plan is None:
            builder.emit_return(returned)
        else:
            builder.begin("break")
            plan.emit(builder, request.hook)
    except Unsupported as exc:
        if plan is None or isinstance(exc, ScanUnfit):  # a scanned list kept past the graph: unroll its loop
            raise
        raise Unsupported(f"{reason.reason} (and the frame cannot resume after it: {exc.reason})",
                          reason.filename, reason.lineno, reason.hint) from exc
    run = builder.build_function(request.f_globals)

    compiled_guards = _compile_guards(output, request)
    report = TranslationReport(
        graphs=graphs,
        backward_graphs=backward_graphs,
        guards=output.guards.text(),
        guard_code=compiled_guards.source_code,
        original_code=code,
        transformed_code=run.__code__,
        emitted=builder.emitted,
        compile_time_s=time.perf_counter() - started,
        break_reasons=break_reasons,
        resume_codes=[(c, resume_functions.origins[c]) for c in (plan.resume_codes if plan else ())],
        unrolled_loops=list(getattr(output, "scan_reports", ())),  # NOTE: [loops traced once]
    )
    debug.report(request, report)
    return CacheEntry(compiled_guards.check, run, compiled_guards.describe_failure, request.config, report)


def _emit_graph(builder, output, request, live: list) -> tuple:
    """Finish the graph (outputs = tensors the code after it needs) and emit its call.

    Returns the graphs the backend compiled: ``([forward], [backward])`` for a graph
    compiled for training (NOTE: [compiled graphs and autograd]), ``([graph], [])`` otherwise.
    """
    outputs = _graph_outputs(live + output.side_effects.values(), output)
    graph = output.graph
    if not outputs and not any(node.op == "call_function" for node in graph.nodes):
        return [], []
    builder.graph_output_index = {node: i for i, node in enumerate(outputs)}
    builder.symbolic_node = output.sym_nodes.node_for
    graph.output(tuple(outputs))
    # (values a custom autograd.Function saved for its backward stay: NOTE: [custom autograd.Function in the graph])
    graph.eliminate_dead_code(lambda node: node.is_impure() or node.meta.get("kept_for_backward", False))
    gm = GraphModule(output.attributes, graph, class_name=f"Graph_{request.code.co_name}")
    compiled = autograd_aware(request.config.backend, gm, list(output.example_inputs), output.grad_enabled)
    builder.emit_graph_call(compiled, output.input_variables)
    if hasattr(compiled, "backward_module"):
        return [compiled.forward_module], [compiled.backward_module]
    return [gm], []


def _graph_outputs(variables: list, output) -> list:
    """Graph nodes the given variables need that cannot be reloaded from a source
    (tensors, and sizes that are symbolic: NOTE: [symbolic inputs])."""
    nodes: dict = {}
    pending, seen = list(variables), set()
    while pending:
        variable = pending.pop(0)
        if id(variable) in seen:  # (a recursive closure's cell holds the function holding it)
            continue
        seen.add(id(variable))
        if isinstance(variable, TensorVariable):
            if variable.source is None:
                nodes.setdefault(variable.node, None)
        elif isinstance(variable, ConstantVariable) and variable.source is None:
            for size in symbolic_sizes(variable.value):
                node = output.sym_nodes.node_for(size)
                if not isinstance(node, int):
                    nodes.setdefault(node, None)
        elif variable.source is None:  # a sourced value is reloaded, not rebuilt
            pending.extend(variable.children())
    return list(nodes)


def _break_reason(reason: Unsupported) -> BreakReason:
    callee = getattr(reason, "callee", None)
    if callee is None or is_library_code(callee.__code__):
        return BreakReason(reason.reason, reason.filename, reason.lineno, reason.hint)
    # The callee's own frame compiles when the eager call runs it and reports this break again.
    call_lineno = reason.user_stack[-1][1] if reason.user_stack else None
    return BreakReason(reason.reason, reason.filename, reason.lineno, reason.hint,
                       callee=callee.__qualname__, call_lineno=call_lineno)
