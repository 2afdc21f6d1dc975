"""Kernel: one generated CUDA source with its parameters and how to launch it."""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field

from .c_types import STORAGE_DTYPES, ctype
from .preamble import PREAMBLE

ELEMENTWISE = "elementwise"  # one work item per thread (grid-stride loop)
ROWS = "rows"  # one row per ``lanes`` threads of a block (chosen at launch, see runtime.launch_config)


@dataclass(frozen=True)
class Param:
    """A kernel parameter: a pointer to one tensor's first element."""

    name: str
    dtype: object
    is_output: bool

    def declaration(self) -> str:
        qualifier = "" if self.is_output else "const "
        return f"{qualifier}{ctype(self.dtype).storage}* __restrict__ {self.name}"


@dataclass(frozen=True)
class SizeParam:
    """A kernel parameter carrying one size or stride (NOTE: [sizes as kernel arguments])."""

    name: str
    is_output: bool = False

    def declaration(self) -> str:
        return f"const long long {self.name}"


class SizeArguments:
    """The sizes and strides a kernel takes as arguments, collected while its code is written.

    Called as ``offset_code``'s ``value``: ``args("numel", 96)`` records the value and
    returns the C expression reading the argument in the kernel's index type, so the
    source names the argument and never the number (NOTE: [sizes as kernel arguments]).
    Asking for one name twice must give one value (one argument).

    Example:
        >>> args = SizeArguments("int")
        >>> args("numel", 96)
        '(int)numel'
        >>> args.params(), args.values()
        ([SizeParam(name='numel', is_output=False)], (96,))
    """

    def __init__(self, index_type: str):
        self.index_type = index_type
        self._values: dict = {}

    def __call__(self, name: str, value: int) -> str:
        if self._values.setdefault(name, value) != value:
            raise ValueError(f"size argument {name} given two values: {self._values[name]} and {value}")
        return f"({self.index_type}){name}"

    def params(self) -> list:
        return [SizeParam(name) for name in self._values]

    def values(self) -> tuple:
        return tuple(self._values.values())


@dataclass(eq=False)
class Kernel:
    """A generated kernel.

    Attributes:
        name: the ``extern "C"`` function name (derived from a hash of the body, so
            equal kernels share a name and a cache entry).
        source: the complete CUDA C++ source (preamble included).
        params: pointer parameters in order: inputs, then outputs.
        kind: ``pointwise``, ``reduction``, ``softmax``, ``log_softmax`` or ``layer_norm``.
        launch: ``ELEMENTWISE`` or ``ROWS`` (see the module constants). A ``ROWS``
            kernel's last parameter is ``lanes``, the threads per row, chosen at launch.
        work: number of work items (elements, or rows).
        shared_itemsize: bytes of shared memory each thread of a block needs.
        row_size: elements one row reduces over (``ROWS`` kernels).
        in_order: a ``ROWS`` kernel whose rows must each be summed by one thread, in
            memory order (NOTE: [summation order] in rows.py): launched with ``lanes`` 1.
        inputs, outputs: the graph nodes whose tensors fill ``params``.
        nodes: the graph nodes the kernel computes.
        size_args: the values of the ``SizeParam`` parameters (they follow the pointers),
            ``lanes`` excepted.
    """

    name: str
    source: str
    params: tuple
    kind: str
    launch: str
    work: int
    shared_itemsize: int = 0
    row_size: int = 1
    in_order: bool = False
    inputs: tuple = ()
    outputs: tuple = ()
    nodes: tuple = field(default_factory=tuple)
    size_args: tuple = ()

    def __repr__(self) -> str:
        return f"<Kernel {self.name} {self.kind} work={self.work} params={len(self.params)}>"


def make_kernel(kind: str, params: list, body: list, **fields) -> Kernel:
    """Assemble preamble, signature and body lines into a named Kernel."""
    text = "\n".join("  " + line if line else "" for line in body)
    signature = ", ".join(p.declaration() for p in params)
    digest = hashlib.sha1(f"{kind}|{signature}|{text}".encode()).hexdigest()[:12]
    name = f"dl_{kind}_{digest}"
    source = f'{PREAMBLE}\nextern "C" __global__ void {name}({signature}) {{\n{text}\n}}\n'
    return Kernel(name, source, tuple(params), kind, **fields)


_SIGNATURE = re.compile(r'extern\s+"C"\s+__global__\s+void\s+(\w+)\s*\(([^)]*)\)')
_PARAM = re.compile(r"^(const\s+)?([\w ]+?)\s*\*\s*__restrict__\s+(\w+)$")
_SIZE_PARAM = re.compile(r"^const\s+long long\s+\w+$")


def parse_signature(source: str) -> tuple:
    """Read ``(name, [(dtype, is_output, param_name), ...])`` back from a kernel's source.

    Used to check that what was generated is what the graph asked for. Size parameters
    (``const long long``) carry geometry, not tensors, and are not listed.
    """
    match = _SIGNATURE.search(source)
    if match is None:
        raise ValueError("no extern \"C\" __global__ function in the source")
    params = []
    for text in filter(None, (p.strip() for p in match.group(2).split(","))):
        if _SIZE_PARAM.match(text):
            continue
        found = _PARAM.match(text)
        if found is None:
            raise ValueError(f"unexpected kernel parameter {text!r}")
        const, storage, name = found.groups()
        params.append((STORAGE_DTYPES[storage.strip()], const is None, name))
    return match.group(1), params
