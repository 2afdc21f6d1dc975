"""The user's ``backward`` of a custom autograd.Function, traced into the joint graph.

See NOTE: [custom autograd.Function in the graph] (tracing/variables/custom_function.py).
The joint tracer replays a region's forward nodes with grad off (they carry no tape
entry); when the last output of a region has been replayed, ``note_region`` puts one
``CustomEntry`` on the tape. Walking the tape backwards, ``CustomEntry.gradients`` calls
``Function.backward`` on proxies with a ctx holding the saved values, exactly as the
Function's autograd node does on tensors, so its ops land in the backward graph.
"""
from __future__ import annotations

from dataclasses import dataclass

from ...autograd.op_node import reduce_to
from ...ops.core.registry import REGISTRY
from ...tensor.meta import TensorMeta
from ..errors import Unsupported
from ..tracing.proxy import ProxyTensor
from ..tracing.variables.custom_function import ConstantMarker


@dataclass
class CustomEntry:
    """One ``apply`` on the tape: its region, input proxies, and output proxies (None for an
    output that carries no gradient)."""

    region: object
    inputs: list
    outputs: list
    values: dict  # captured-graph node -> the joint graph node it had at the region's end

    def gradients(self, grad_outputs: list) -> list:
        """``backward``'s gradient per input (None where it gives none), traced on proxies."""
        region = self.region
        grads = []
        for grad, out in zip(grad_outputs, self.outputs):
            if grad is None and region.materialize_grads and out is not None:
                grad = REGISTRY["zeros"](size=tuple(out._sizes), dtype=out._dtype, device=out._device)
            grads.append(grad)
        ctx = TracedContext(
            saved_tensors=tuple(self._value(v) for v in region.saved),
            needs_input_grad=tuple(p is not None for p in self.inputs),
            **{name: self._value(v) for name, v in region.attributes.items()})
        result = region.function.backward(ctx, *grads)
        result = result if isinstance(result, tuple) else (result,)
        if len(result) < len(self.inputs):
            raise Unsupported(f"{region.function.__qualname__}.backward returned {len(result)} gradients for "
                              f"{len(self.inputs)} inputs (raises in eager)")
        out = []
        for grad, proxy in zip(result, self.inputs):
            if proxy is None or grad is None:
                out.append(None)
            elif not isinstance(grad, ProxyTensor):
                raise Unsupported(f"{region.function.__qualname__}.backward returned a gradient that is not a "
                                  "traced tensor")
            else:
                out.append(reduce_to(grad, TensorMeta.of(proxy)))
        return out

    def _value(self, kept):
        if isinstance(kept, ConstantMarker):
            return kept.value
        node = self.values[kept]
        return ProxyTensor.create(node, node.meta["val"])


class TracedContext:
    """The ctx ``backward`` gets in the joint graph: saved tensors and forward's attributes."""

    def __init__(self, saved_tensors: tuple, needs_input_grad: tuple, **attributes):
        self.saved_tensors = saved_tensors
        self.needs_input_grad = needs_input_grad
        self.__dict__.update(attributes)


def note_region(tracer, node, env: dict, pending: dict) -> None:
    """After ``node`` of the captured graph was replayed: if it is the last of a region's
    outputs and saved values, put the region on ``tracer``'s tape and mark its outputs as
    requiring grad when an input does."""
    for region in node.meta.get("custom_function_parts", ()):
        left = pending.setdefault(id(region), {n for n in region.triggers() if n.graph is node.graph})
        left.discard(node)
        if not left:
            _note(tracer, region, env)


def _before_writes(node):
    """The joint graph node a tensor had before the in-place nodes that wrote it (each rebinds it)."""
    while node.op == "call_function" and "inplace" in getattr(node.target, "tags", ()):
        node = node.args[0]
    return node


def _note(tracer, region, env: dict) -> None:
    inputs = [env[n] if n is not None and n in env else None for n in region.inputs]
    dirty = {n for n in region.outputs if n in region.inputs}
    inputs = [ProxyTensor.create(_before_writes(p.node), TensorMeta.of(p)) if n in dirty and isinstance(p, ProxyTensor)
              else p for n, p in zip(region.inputs, inputs)]
    inputs = [p if isinstance(p, ProxyTensor) and p.node in tracer.requires_grad else None for p in inputs]
    if not any(p is not None for p in inputs):
        return
    changed = {p.node for n, p in zip(region.inputs, inputs) if n in dirty and p is not None}
    if any(node in changed for entry in tracer.tape if not isinstance(entry, CustomEntry)
           for _, node in entry.versions):
        raise Unsupported(f"{region.function.__qualname__} changes in place a tensor an earlier op saved for "
                          "its backward (eager's backward raises)")
    outputs = []
    for i, out_node in enumerate(region.outputs):
        proxy = env.get(out_node)
        differentiable = isinstance(proxy, ProxyTensor) and i not in region.non_differentiable and (
            proxy._dtype.is_floating_point or proxy._dtype.is_complex)
        if differentiable and out_node in dirty:
            # the changed input: from here on a new node stands for it, with the Function's history
            proxy.node = REGISTRY["alias"](proxy).node
        if differentiable:
            own = ProxyTensor.create(proxy.node, TensorMeta.of(proxy))
            tracer.requires_grad.add(own.node)
            outputs.append(own)
        else:
            outputs.append(None)
    kept = region.kept()
    missing = [n for n in kept if n not in env or not isinstance(env[n], ProxyTensor)]
    if missing:
        raise Unsupported(f"{region.function.__qualname__} saves a value the graph does not hold")
    tracer.tape.append(CustomEntry(region, inputs, outputs, {n: env[n].node for n in kept}))
