"""torch.compile's ``mode=`` and ``options=`` for ``dl.compile``: each mapped onto a dynamo_lite knob, or noted as having no effect.

NOTE: [compile modes] Ported code passes torch.compile's tuning arguments. Values torch
accepts are accepted here; a value torch rejects raises the ``RuntimeError`` torch raises.
Where dynamo_lite has a knob of the same meaning, the argument sets it: ``max-autotune``
(and ``options={"max_autotune": True}``) builds the C tier of ``backend="auto"`` at the
first call instead of after 50 ms of calls (NOTE: [tiering]), ``options={"trace.enabled":
True}`` is ``debug=True``. The rest (CUDA graphs, Triton and autotuning switches) have
nothing to act on here: each becomes a note on the compiled function, which ``dl.explain``
prints ("Compile options without effect") and the ``dynamo_lite`` logger logs at INFO.
"""
from __future__ import annotations

from dataclasses import dataclass

#: torch.compile's modes: what each does in dynamo_lite (None: nothing to act on, the reason in words).
MODES = {
    "default": "",
    "reduce-overhead": None,
    "max-autotune": "max_autotune",
    "max-autotune-no-cudagraphs": "max_autotune",
}
MODE_NO_EFFECT = {"reduce-overhead": "it records CUDA graphs; dynamo_lite's backends launch no CUDA graphs"}

#: Inductor options with a dynamo_lite meaning: option -> knob.
OPTION_KNOBS = {"max_autotune": "max_autotune", "trace.enabled": "debug"}
#: Inductor options torch accepts that have nothing to act on here.
OPTIONS_WITHOUT_EFFECT = frozenset({
    "triton.cudagraphs", "epilogue_fusion", "shape_padding", "freezing", "coordinate_descent_tuning",
    "max_autotune_gemm", "max_autotune_pointwise", "layout_optimization", "force_same_precision",
    "fallback_random", "trace.graph_diagram", "aggressive_fusion", "benchmark_kernel", "cpp_wrapper",
    "split_reductions", "unroll_reductions_threshold", "size_asserts", "triton.unique_kernel_names",
    "debug", "verbose_progress", "compile_threads", "conv_1x1_as_mm", "permute_fusion",
})


@dataclass(frozen=True)
class CompileOptions:
    """What ``mode``/``options`` ask of dl.compile: the knobs they set and the notes on the rest."""

    max_autotune: bool = False
    debug: bool = False
    notes: tuple = ()


def resolve_compile_options(mode, options) -> CompileOptions:
    """The knobs and notes of ``dl.compile(mode=..., options=...)``.

    Raises:
        RuntimeError: both given, an unknown mode, or an unknown option (torch's messages).

    Example:
        >>> resolve_compile_options("max-autotune", None).max_autotune
        True
    """
    if mode is not None and options is not None:
        raise RuntimeError("Either mode or options can be specified, but both can't be specified at the same time.")
    knobs, notes = set(), []
    if mode is not None:
        if mode not in MODES:
            raise RuntimeError(f"Unrecognized mode={mode}, should be one of: {', '.join(MODES)}")
        if MODES[mode] is None:
            notes.append(f"mode={mode!r} has no effect: {MODE_NO_EFFECT[mode]}")
        elif MODES[mode]:
            knobs.add(MODES[mode])
    for key, value in (options or {}).items():
        if key in OPTION_KNOBS:
            if value:
                knobs.add(OPTION_KNOBS[key])
        elif key in OPTIONS_WITHOUT_EFFECT:
            notes.append(f"options[{key!r}] has no effect: dynamo_lite has no such knob")
        else:
            known = ", ".join(sorted(set(OPTION_KNOBS) | OPTIONS_WITHOUT_EFFECT))
            raise RuntimeError(f"Unexpected optimization option {key}, known options are [{known}]")
    return CompileOptions(max_autotune="max_autotune" in knobs, debug="debug" in knobs, notes=tuple(notes))
