"""A Capture (graph_capture.py) as the GraphDef and RunMetadata TensorBoard's graph tab draws.

Names are paths, so TensorBoard nests them: ``Net/Linear[fc1]/linear`` sits in the scope
``Linear[fc1]`` of ``Net``. The model's inputs are ``input/<name>`` and its outputs
``output/output_<i>`` (torch's IO nodes); parameters are ``<module scope>/<parameter>``
nodes of op ``Parameter``. With more than one captured graph each lives under its own scope
``graph_<k>``, with a ``Placeholder`` per input (fed by the node that produced the tensor, or
by the model's input) and an ``Output`` node, and each graph break is a ``GraphBreak`` node
``graph_break_<i>`` between the graphs it separates, its reason, location and hint as attributes.
"""
from __future__ import annotations

from tensorboard.compat.proto.attr_value_pb2 import AttrValue
from tensorboard.compat.proto.config_pb2 import RunMetadata
from tensorboard.compat.proto.graph_pb2 import GraphDef
from tensorboard.compat.proto.node_def_pb2 import NodeDef
from tensorboard.compat.proto.step_stats_pb2 import (AllocatorMemoryUsed, DeviceStepStats, NodeExecStats, NodeOutput,
                                                     StepStats)
from tensorboard.compat.proto.tensor_description_pb2 import TensorDescription
from tensorboard.compat.proto.tensor_shape_pb2 import TensorShapeProto
from tensorboard.compat.proto.types_pb2 import DataType
from tensorboard.compat.proto.versions_pb2 import VersionDef

from ...graph import Node
from ...tensor.meta import TensorMeta
from .graph_capture import OP_NODES, Capture, flatten, parameter_scope, op_name

DATA_TYPES = {  # dl dtype name -> TensorFlow DataType name
    "float32": "DT_FLOAT", "float64": "DT_DOUBLE", "float16": "DT_HALF", "bfloat16": "DT_BFLOAT16",
    "int8": "DT_INT8", "int16": "DT_INT16", "int32": "DT_INT32", "int64": "DT_INT64", "uint8": "DT_UINT8",
    "bool": "DT_BOOL", "complex64": "DT_COMPLEX64", "complex128": "DT_COMPLEX128",
}


def _metas(value) -> list:
    return [m for m in flatten(value) if isinstance(m, TensorMeta)]


def _meta_of(value):
    """TensorMeta of a tensor, or None."""
    try:
        return TensorMeta.of(value)
    except Exception:
        return None


def _dim(size) -> int:
    return size if isinstance(size, int) else -1  # a symbolic size


def _shape(meta) -> TensorShapeProto:
    return TensorShapeProto(dim=[TensorShapeProto.Dim(size=_dim(s)) for s in meta.shape])


def _attrs(metas: list) -> dict:
    attrs = {"_output_shapes": AttrValue(list=AttrValue.ListValue(shape=[_shape(m) for m in metas]))}
    if metas:
        name = DATA_TYPES.get(metas[0].dtype.name)
        if name is not None:
            attrs["dtype"] = AttrValue(type=DataType.Value(name))
        attrs["dl_dtype"] = AttrValue(s=str(metas[0].dtype.name).encode())
    return attrs


def _device(metas: list) -> str:
    device = str(metas[0].device) if metas else "cpu"
    kind, _, index = device.partition(":")
    return f"/device:{kind.upper()}:{index or 0}"


class GraphDefBuilder:
    """Collects NodeDefs (unique names, one per tensor producer) and what RunMetadata reports of them."""

    def __init__(self, capture: Capture):
        self.capture = capture
        self.nodes: list = []
        self.names: set = set()
        self.metas: dict = {}  # node name -> output metas
        self.producer: dict = {}  # id(tensor) -> name of the node that made it (model inputs, graph outputs)
        self.several = len(capture.graphs) > 1

    def add(self, name: str, op: str, inputs=(), metas=(), **extra) -> str:
        base, n = name, 1
        while name in self.names:
            name, n = f"{base}_{n}", n + 1
        self.names.add(name)
        metas = list(metas)
        attrs = _attrs(metas)
        attrs.update({k: AttrValue(s=str(v).encode()) for k, v in extra.items() if v not in (None, "")})
        self.nodes.append(NodeDef(name=name, op=op, input=list(inputs), device=_device(metas), attr=attrs))
        self.metas[name] = metas
        return name

    # -- the pieces -----------------------------------------------------------------------
    def model_inputs(self) -> None:
        for i, tensor in enumerate(self.capture.inputs):
            meta = _meta_of(tensor)
            if meta is not None:
                name = self.capture.input_names[i] if i < len(self.capture.input_names) else f"input_{i}"
                self.producer[id(tensor)] = self.add(f"input/{name}", "IO Node", metas=[meta])

    def graph(self, k: int, gm, after_break: str | None) -> str | None:
        """Add graph ``k``'s nodes; returns the name of its Output node (or last node)."""
        prefix = f"graph_{k}/" if self.several else ""
        inputs, outputs = self.capture.calls.get(id(gm), ([], []))
        names: dict = {}  # id(node) -> NodeDef name
        placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
        for i, node in enumerate(placeholders):
            tensor = inputs[i] if i < len(inputs) else None
            source = self.producer.get(id(tensor)) if tensor is not None else None
            metas = _metas(node.meta.get("val"))
            if source is not None and not self.several:
                names[id(node)] = source
                continue
            edges = ([source] if source else []) + ([f"^{after_break}"] if after_break else [])
            names[id(node)] = self.add(f"{prefix}{self.capture.scopes['']}/{node.name}" if not self.several
                                       else f"{prefix}{node.name}", "Placeholder", edges, metas)
        last = None
        for node in gm.graph.nodes:
            metas = _metas(node.meta.get("val"))
            if node.op == "get_attr":
                names[id(node)] = self._attribute(prefix, gm, node, metas)
            elif node.op in OP_NODES:
                scope = self.capture.node_scopes.get(id(node), self.capture.scopes[""])
                edges = [names[id(a)] for a in flatten((node.args, node.kwargs)) if isinstance(a, Node)
                         and id(a) in names]
                constants = _describe_constants(node)
                last = names[id(node)] = self.add(f"{prefix}{scope}/{node.name}", op_name(node.target), edges, metas,
                                                  target=str(node.target), args=constants)
            elif node.op == "output":
                returned = [a for a in flatten(node.args) if isinstance(a, Node)]
                for tensor, value in zip(outputs, flatten(node.args)):
                    if isinstance(value, Node) and id(value) in names:
                        self.producer.setdefault(id(tensor), names[id(value)])
                if self.several:
                    last = self.add(f"{prefix}output", "Output", [names[id(a)] for a in returned if id(a) in names])
        return last

    def _attribute(self, prefix: str, gm, node, metas) -> str:
        tensor = gm.get_attribute(node.target)
        qualified = self.capture.parameters.get(id(tensor))
        if qualified is None:
            return self.add(f"{prefix}{self.capture.scopes['']}/{node.target}", "Const", (), metas)
        scope = parameter_scope(gm, node, self.capture)
        known = f"{prefix}{scope}/{qualified.rpartition('.')[2]}"
        if known in self.names:  # a parameter read twice in one graph
            return known
        kind = "Parameter" if getattr(tensor, "requires_grad", False) else "Buffer"
        return self.add(known, kind, (), metas, parameter=qualified)

    def break_node(self, i: int, reason, previous: str | None) -> str:
        location = f"{reason.filename}:{reason.lineno}" if getattr(reason, "filename", None) else ""
        return self.add(f"graph_break_{i}", "GraphBreak", [f"^{previous}"] if previous else [],
                        reason=getattr(reason, "reason", str(reason)), location=location,
                        hint=getattr(reason, "hint", ""))

    def model_outputs(self) -> None:
        for i, tensor in enumerate(self.capture.outputs):
            meta = _meta_of(tensor)
            if meta is None:
                continue
            source = self.producer.get(id(tensor))
            self.add(f"output/output_{i}", "IO Node", [source] if source else [], [meta])

    # -- the whole -----------------------------------------------------------------------
    def build(self) -> tuple:
        self.model_inputs()
        previous, graph_index, break_index, after_break = None, 0, 0, None
        for kind, item in self.capture.segments:
            if kind == "graph":
                last = self.graph(graph_index, item, after_break)
                previous, after_break, graph_index = last or previous, None, graph_index + 1
            else:
                after_break = self.break_node(break_index, item, previous)
                break_index += 1
        self.model_outputs()
        return GraphDef(node=self.nodes, versions=VersionDef(producer=22)), self.run_metadata()

    def run_metadata(self) -> RunMetadata:
        """Per node, the bytes of its outputs (TensorBoard colours the graph by memory with it)."""
        stats = []
        for node in self.nodes:
            metas = self.metas.get(node.name) or []
            outputs, total = [], 0
            for slot, meta in enumerate(metas):
                if not all(isinstance(s, int) for s in meta.shape):
                    continue
                nbytes = int(meta.numel()) * meta.dtype.itemsize
                total += nbytes
                dtype = DataType.Value(DATA_TYPES.get(meta.dtype.name, "DT_INVALID"))
                outputs.append(NodeOutput(slot=slot, tensor_description=TensorDescription(dtype=dtype, shape=_shape(meta))))
            stats.append(NodeExecStats(node_name=node.name, output=outputs,
                                       memory=[AllocatorMemoryUsed(allocator_name="cpu", total_bytes=total)]))
        return RunMetadata(step_stats=StepStats(dev_stats=[DeviceStepStats(device="/device:CPU:0", node_stats=stats)]))


def _describe_constants(node) -> str:
    """The node's non-tensor arguments, as the graph tab's info card shows them (``dim=(1,)``)."""
    parts = [repr(a) for a in node.args if not isinstance(a, Node) and not _has_node(a)]
    parts += [f"{k}={v!r}" for k, v in node.kwargs.items() if not isinstance(v, Node) and not _has_node(v)]
    return ", ".join(parts)


def _has_node(value) -> bool:
    return any(isinstance(v, Node) for v in flatten(value))


def graph_def(capture: Capture) -> tuple:
    """``(GraphDef, RunMetadata)`` of a capture."""
    return GraphDefBuilder(capture).build()
