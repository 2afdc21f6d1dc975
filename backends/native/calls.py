"""Calls of C kernels from a generated function: argument blocks, and kernels emitted back to back as one call.

NOTE: [native calls] A kernel is called through a small C entry point taking one
argument block (an ``int64`` array) and the thread count. The block holds every
operand's address, then per kernel the offset of its iteration geometry (rank, sizes,
strides; a row op's row length; a gemm's dimensions), then the geometries. Blocks
belong to a pool set (``FunctionBuilder.pool_entry``), built for its shape: addresses
of pool memory and the geometry are written once per set, and only the addresses of
inputs, parameters and fresh outputs are stored on each call. A ctypes call with two
arguments and no conversion table costs a fraction of one with ten converted arguments.
Since geometry comes from the pool set, a graph with symbolic sizes gets one function
and one library for every size of the same ``structure``.

NOTE: [native build units] A kernel whose source equals an earlier one's but for its name (the
same op on the next layer: kernels read sizes at run time) is not emitted again; its calls go to
the earlier one, so a deep stack of identical blocks costs one kernel per distinct block. The
library of a large function is split into units of at most ``lowering.MAX_UNIT_BYTES`` of
kernel source, each chain in one unit with the kernels it calls; units build in parallel and
are cached one by one (a unit is a source like any other to the build cache).

Kernels whose calls would follow each other with no Python statement in between form a
*chain*: one entry point runs them in order, one ctypes call instead of several (a
transformer block's bias add, layer_norm and next linear are one call). The lowering
says when its hooks start (``enter``) and end (``leave``) emitting; lines anyone else
emitted in between close the chain. A kernel joining a chain moves the chain's call line
after its own lines (a fresh output's allocation, address stores), which read no kernel
result.
"""
from __future__ import annotations

import ctypes
import re
from dataclasses import dataclass, field

_COMMENT = re.compile(r"/\*.*?\*/", re.S)

# The C parameters of each kind of kernel before its operand pointers, read from its geometry ``g``.
LEADING = {"group": "g[0], g + 1, g + 1 + g[0], threads", "row": "g[0], g + 2, g[1], g + 2 + g[0], threads",
           "image": "g, threads", "gemm": "g, threads"}


@dataclass
class Kernel:
    """One kernel of a chain: its C name, operand count and how to build its block words."""

    c_name: str
    count: int  # pointers: operands, then the scratch array if any
    pooled: list  # per operand: its value's key if it lives in the pool, else None
    geometry: object  # shape -> geometry words
    scratch: object = None  # shape -> scratch array, or None
    first: int = 0  # index of its first pointer in the chain's block


@dataclass
class Chain:
    """Kernels called by one entry point, in order."""

    function: str  # the global the generated code calls
    block: str  # the pool entry of its argument block
    target: str  # the local holding the block in the generated code
    lines: list  # the builder's line list it was emitted into
    kernels: list = field(default_factory=list)
    call_index: int = -1  # where its call line is
    mark: int = 0  # len(lines) when the lowering last emitted
    source_bytes: int = 0  # of the distinct kernels it calls
    pointers: int = 0  # of all its kernels (the block's first words)
    names: set = field(default_factory=set)  # of the distinct kernels it calls

    def argument_block(self, mem):
        """The block of one pool set: pointers, geometry offsets, geometries (NOTE: [native calls])."""
        shape, words, keep, scratches = mem.shape, [], [], []
        for kernel in self.kernels:
            arrays = [mem.array(shape.by_key[key]) if key is not None else None for key in kernel.pooled]
            extra = kernel.scratch(shape) if kernel.scratch is not None else None
            words += [a.ctypes.data if a is not None else 0 for a in arrays]
            words += [extra.ctypes.data] if extra is not None else []
            keep += arrays
            scratches.append(extra)
        geometries = [kernel.geometry(shape) for kernel in self.kernels]
        offset = len(words) + len(self.kernels)
        for geometry in geometries:
            words.append(offset)
            offset += len(geometry)
        for geometry in geometries:
            words += geometry
        return (ctypes.c_int64 * len(words))(*words), keep, scratches  # keep: the pool memory stays alive

    def entry_source(self) -> str:
        calls = "".join(f"  {k.c_name}_run(a + {k.first}, a + a[{self.pointers + i}], threads);\n"
                        for i, k in enumerate(self.kernels))
        return f"void {self.function}_entry(const int64_t* a, int threads) {{\n{calls}}}"


class KernelCalls:
    """The kernels and entry points of the function being generated (NOTE: [native calls])."""

    def __init__(self, threads, max_chain_bytes: int | None = None):
        self.threads, self.max_chain_bytes = threads, max_chain_bytes
        self.sources: list = []  # one per distinct kernel (NOTE: [native build units])
        self.chains: list = []
        self._named: dict = {}  # a kernel's source with its name blanked -> its name
        self._source_of: dict = {}  # kernel name -> its source
        self._open: Chain | None = None
        self._addresses: dict = {}  # root Value -> the name of its AddressCache

    def enter(self, builder) -> None:
        """The lowering starts emitting: lines emitted since it last did close the open chain."""
        chain = self._open
        if chain is not None and (builder.lines is not chain.lines or len(builder.lines) != chain.mark):
            self._open = None

    def leave(self, builder) -> None:
        """The lowering has emitted; the next kernel may still join the open chain."""
        if self._open is not None:
            self._open.mark = len(builder.lines)

    def close(self) -> None:
        """End the open chain (a statement reading its results follows)."""
        self._open = None

    def add(self, builder, kind: str, make_source, members: list, operands: list, geometry, scratch=None) -> tuple:
        """Add a kernel to the library and its call to the open chain (or a new one); ``scratch(shape)``
        makes an array per pool set passed after the operands. Returns ``(block entry, index of the
        kernel in the chain)``: the block entry is ``(int64 array, arrays kept alive, scratch per kernel)``."""
        c_name = f"dl_{kind}{len(self.sources)}"
        count = len(operands) + (scratch is not None)
        pointers = ", ".join(f"(char*)(intptr_t)a[{k}]" for k in range(count))
        text = (f"{make_source(c_name)}\n\nstatic void {c_name}_run(const int64_t* a, const int64_t* g, "
                f"int threads) {{\n  {c_name}({LEADING[kind]}, {pointers});\n}}")
        blank = _COMMENT.sub("", text.replace(c_name, "\0"))  # comments name the nodes
        if blank in self._named:  # the same kernel as an earlier one: call that one
            c_name = self._named[blank]
        else:
            self._named[blank] = c_name
            self._source_of[c_name] = text
            self.sources.append(text)
        values = [builder.values[n] for n in operands]
        chain = self._open
        added = 0 if chain is not None and c_name in chain.names else len(self._source_of[c_name])
        if chain is not None and self.max_chain_bytes is not None \
                and chain.source_bytes + added > self.max_chain_bytes:
            chain, added = None, len(self._source_of[c_name])  # a chain fits in one build unit
        if chain is None:
            function = builder.fresh_name(f"_native_{members[0].name}")
            chain = Chain(function, "", builder.fresh_name(f"{function}_a"), builder.lines)
            chain.block = builder.pool_entry(f"{function}_args", chain.argument_block)
            builder.emit(f"{chain.target} = {chain.block}[0]")
            self.chains.append(chain)
        else:
            del builder.lines[chain.call_index]
        kernel = Kernel(c_name, count, [v.key if v.root.kind == "buffer" else None for v in values], geometry,
                        scratch, chain.pointers)
        chain.kernels.append(kernel)
        chain.source_bytes += added
        chain.pointers += count
        chain.names.add(c_name)
        builder.emit(f"# native kernel {c_name}: {', '.join(m.name for m in members)}")
        for k, value in enumerate(values):
            if value.root.kind != "buffer":
                builder.emit(f"{chain.target}[{kernel.first + k}] = {self._address(builder, value)}")
        builder.emit(f"{chain.function}({chain.target}, {builder.bind(self.threads, 'threads')}.value)")
        chain.call_index = len(builder.lines) - 1
        chain.mark = len(builder.lines)
        self._open = chain
        return chain.block, len(chain.kernels) - 1

    def source(self, preamble: str) -> str:
        """The C source of every kernel and entry point so far."""
        return self.unit_source(preamble, self.chains)

    def units(self, max_bytes: int) -> list:
        """The chains split into build units (NOTE: [native build units]): consecutive chains while the
        distinct kernels they call stay within ``max_bytes`` of source (a unit has at least one chain)."""
        units, current, names = [], [], set()
        size = 0
        for chain in self.chains:
            new = {k.c_name for k in chain.kernels} - names
            extra = sum(len(self._source_of[name]) for name in new)
            if current and size + extra > max_bytes:
                units.append(current)
                current, names, size = [], set(), 0
                new = {k.c_name for k in chain.kernels}
                extra = sum(len(self._source_of[name]) for name in new)
            current.append(chain)
            names |= new
            size += extra
        return units + ([current] if current else [])

    def unit_source(self, preamble: str, chains: list) -> str:
        """The C source of the kernels ``chains`` call (each once) and of their entry points."""
        names = list(dict.fromkeys(k.c_name for chain in chains for k in chain.kernels))
        texts = [self._source_of[name] for name in names] + [chain.entry_source() for chain in chains]
        return preamble + "\n\n" + "\n\n".join(texts) + "\n"

    def unit_kernel_sources(self, chains: list) -> list:
        """The sources of the distinct kernels ``chains`` call."""
        return [self._source_of[name] for name in dict.fromkeys(k.c_name for chain in chains for k in chain.kernels)]

    def bind(self, library, builder, chains: list | None = None) -> None:
        """Bind each of ``chains``' (default: all) entry points of ``library`` to the global its call names."""
        for chain in self.chains if chains is None else chains:
            function = getattr(library, f"{chain.function}_entry")
            function.restype = None  # no argtypes: the block passes by reference, the thread count as an int
            builder.globals[chain.function] = function

    def _address(self, builder, value) -> str:
        """An expression of the address of ``value``'s first element, for memory outside the pool:
        a parameter's storage address is looked up once per storage (``AddressCache``)."""
        root = value.root
        offset = builder.geometry(f"{value.name}_offset", value, lambda v: v.offset * v.dtype.itemsize)
        if root.kind == "param":
            if root not in self._addresses:
                self._addresses[root] = builder.bind(AddressCache(), f"{root.name}_address")
            start = f"{self._addresses[root]}.of({builder.tensor_of(root)})"
        else:  # an input or a fresh output: new memory on (almost) every call
            start = f"{builder.root_memory(root)}.ctypes.data"
        return start if offset == "0" else f"{start} + {offset}"


class AddressCache:
    """The address of a tensor's storage, refreshed when the tensor gets another storage (one
    tuple, swapped whole: a concurrent call never sees a new storage with the old address)."""

    __slots__ = ("entry",)

    def __init__(self):
        self.entry = (None, 0)

    def of(self, tensor) -> int:
        data, entry = tensor._storage.data, self.entry
        if entry[0] is not data:
            entry = self.entry = (data, data.ctypes.data)
        return entry[1]
