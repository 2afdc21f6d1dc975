"""Which conv2d nodes run as a direct convolution, and the relu and max_pool2d their kernel computes too.

NOTE: [conv2d epilogues] A conv2d read by a fused group holding just a ``relu`` of it,
whose result in turn is read only by a ``max_pool2d`` with a window equal to its stride
(at most ``MAX_POOL_KERNEL``), no padding, dilation 1 and floor mode, is computed with
both by one kernel (NOTE: [direct conv2d]); the lowering runs the group and the pooling
at the conv2d's step (``ConvEpilogue.nodes``). The relu's result is never written, the
conv2d's only when something else reads it too (``keep``: a training graph's forward
saves it for backward), and then the pooling is fused only if its windows tile the whole
image. Any prefix of that chain fuses the same way (a conv2d then relu; a conv2d read
only by a max_pool2d). A conv2d the direct kernel does not take
(groups, an integer dtype, fewer output channels than half a vector unless one image's
im2col matrix is over ``FEW_OUTPUTS_MIN_COLUMN_BYTES``, weight sizes that are not integers,
a staged input over ``MAX_STAGED_BYTES``, weights over ``MAX_DIRECT_WEIGHT_BYTES``)
keeps the gather and eager's gemm (NOTE: [native image ops]). The direct kernel streams all the
weights once per tile of pixels, which pays while they stay in the L2 cache; the many-channel
convolutions of a network's late stages (512 -> 512 on 4 x 4: 9 MiB of weights) are a large
gemm over few pixels, which BLAS blocks far better (42.6 ms direct against 1.5 ms for the
numpy backend's gemm, 1 thread, 3x3 conv + BN + ReLU).
"""
from __future__ import annotations

from dataclasses import dataclass

from dynamo_lite.graph.node import Node

from .c_ops import C_TYPES
from .conv_direct import MAX_POOL_KERNEL, DirectConv
from .image_ops import PARSERS

FLOATS = ("float", "double")
MAX_STAGED_BYTES = 64 << 20  # the zero-padded copy of a whole batch the kernel stages
MAX_DIRECT_WEIGHT_BYTES = 256 << 10  # weights the direct kernel rereads per pixel tile: about an L2's share
# Fewer output channels than half a vector waste most of the direct kernel's lanes; it still wins
# where one image's im2col matrix leaves the cache (1 thread, float32, ms direct / gather + gemm:
# 16 -> 3 9x9 on 72x72 (21 MiB of columns) 0.89 / 2.93, 32 -> 3 3x3 on 64x64 (4.5 MiB) 0.55 / 1.13,
# 64 -> 1 3x3 on 64x64 (9 MiB) 0.45 / 0.49; but 256 -> 3 on 8x8 (0.6 MiB) 0.17 / 0.10, 16 -> 2 1x1
# on 64x64 (0.25 MiB) 0.042 / 0.025).
FEW_OUTPUTS_MIN_COLUMN_BYTES = 2 << 20


@dataclass
class ConvEpilogue:
    """What a direct conv2d kernel computes after its sum: an optional relu group, then an optional pooling."""

    relu: object = None  # the FusionGroup holding the relu
    pool: Node | None = None  # the max_pool2d node
    keep: bool = False  # the conv2d's result is read elsewhere too: the kernel writes it as well

    @property
    def nodes(self) -> list:
        """The nodes the conv2d's kernel computes besides the conv2d, in order."""
        return (list(self.relu.nodes) if self.relu is not None else []) + ([self.pool] if self.pool is not None else [])

    def result(self, conv: Node) -> Node:
        """The node whose value the kernel writes."""
        return self.pool if self.pool is not None else self.relu.nodes[0] if self.relu is not None else conv


def conv_epilogues(groups: list, values: dict, fuse: bool = True) -> dict:
    """``{conv2d node: ConvEpilogue}`` for every conv2d running as a direct convolution (NOTE: [conv2d epilogues]);
    without ``fuse`` the epilogues are empty."""
    relu_groups = {group.inputs[0]: group for group in groups if _is_relu_of_input(group)}
    found = {}
    for node in values:
        if node.op != "call_function" or getattr(node.target, "name", None) != "conv2d":
            continue
        if direct_call(node, values) is None:
            continue
        epilogue = ConvEpilogue() if not fuse else _epilogue(node, relu_groups.get(node), values)
        if direct_call(node, values, epilogue) is None:
            epilogue = ConvEpilogue()
        found[node] = epilogue
    return found


def _epilogue(conv: Node, relu, values: dict) -> ConvEpilogue:
    """The relu group and pooling after ``conv`` a direct kernel computes (``relu``: the group of a relu of it)."""
    epilogue = ConvEpilogue(relu=relu, keep=relu is not None and len(conv.users) > 1)
    last = relu.nodes[0] if relu is not None else conv
    readers = list(last.users)
    window = _pool_window(readers[0], last) if len(readers) == 1 else None
    # Kept, the conv2d's result needs every pixel, which pooled tiles cover only when the window divides its size.
    if window is not None and not (epilogue.keep and any(s % window for s in values[conv].sizes[2:])):
        epilogue.pool = readers[0]
    return epilogue


def direct_call(node: Node, values: dict, epilogue: ConvEpilogue | None = None) -> DirectConv | None:
    """The direct kernel of conv2d ``node`` with ``epilogue`` at these values, or None to keep the gather + gemm."""
    parsed = PARSERS["conv2d"](node)
    if parsed is None:
        return None
    (x,), constants = parsed
    epilogue = epilogue or ConvEpilogue()
    weight, bias = node.args[1], (node.args[2] if len(node.args) > 2 else None)
    result = values[epilogue.result(node)]
    ctype = C_TYPES.get(result.dtype.numpy)
    read = [x, weight] + ([bias] if bias is not None else [])
    if ctype not in FLOATS or not all(values[n].is_tensor and values[n].dtype is result.dtype for n in read):
        return None
    channels = tuple(values[weight].sizes[:2])
    if len(values[x].sizes) != 4 or not all(type(s) is int for s in values[weight].sizes):
        return None
    if bias is not None and len(values[bias].sizes) != 1:
        return None
    pool = _pool_window(epilogue.pool, epilogue.pool.args[0]) if epilogue.pool is not None else 1
    operands = read + ([node] if epilogue.keep else []) + [epilogue.result(node)]
    call = DirectConv(node, operands, constants, channels, ctype, pool, epilogue.relu is not None, bias is not None,
                      epilogue.keep)
    n, _, h, w = values[x].sizes
    staged = call.scratch_elements(n, h, w) * result.dtype.itemsize
    weight_bytes = values[weight].numel * result.dtype.itemsize
    (kh, kw), oh, ow = constants[0], *values[node].sizes[2:]
    columns = channels[1] * kh * kw * oh * ow * result.dtype.itemsize  # one image's im2col matrix
    few = channels[0] < call.lanes // 2 and columns < FEW_OUTPUTS_MIN_COLUMN_BYTES
    return call if not few and staged <= MAX_STAGED_BYTES and weight_bytes <= MAX_DIRECT_WEIGHT_BYTES else None


def direct_words(call: DirectConv, values: dict) -> list:
    """The geometry words of ``call`` at these values: N, C, H, W, the input's strides, the conv2d's
    OH, OW, the result's sizes and strides, the weight's strides, the bias's stride (then the conv2d's
    strides when ``keep``)."""
    node = call.node
    x, weight, result = values[node.args[0]], values[node.args[1]], values[call.operands[-1]]
    bias = values[node.args[2]].strides[0] if call.bias else 0
    kept = list(values[node].strides) if call.keep else []
    return [*x.sizes, *x.strides, *values[node].sizes[2:], *result.sizes[2:], *result.strides, *weight.strides, bias,
            *kept]


def _is_relu_of_input(group) -> bool:
    """A fused group of just a relu of its one input."""
    if len(group.nodes) != 1 or len(group.inputs) != 1 or group.outputs != group.nodes:
        return False
    relu = group.nodes[0]
    return relu.target.name == "relu" and relu.args == (group.inputs[0],) and not relu.kwargs


def _pool_window(pool: Node, source: Node) -> int | None:
    """The window of a max_pool2d of ``source`` a direct conv2d kernel computes, else None."""
    if pool.op != "call_function" or getattr(pool.target, "name", None) != "max_pool2d" or pool.args[0] is not source:
        return None
    parsed = PARSERS["max_pool2d"](pool)
    if parsed is None:
        return None
    args = list(pool.args) + [(0, 0), (1, 1), False][len(pool.args) - 3:]
    (kernel, stride, padding, dilation), ceil_mode = parsed[1], args[5]
    square = kernel[0] == kernel[1] == stride[0] == stride[1]
    if not square or padding != (0, 0) or dilation != (1, 1) or ceil_mode or kernel[0] > MAX_POOL_KERNEL:
        return None
    return kernel[0]
