"""The guard tree: an entry's guards as one generated function over shared source loads.

NOTE: [guard tree] Guards hang on their sources, and sources form a tree by prefix
(``self`` -> ``self.blocks`` -> ``self.blocks[0]`` -> ``self.blocks[0].weight``). The
generated ``check(values)`` walks that tree depth first: each source is loaded once,
into a local, from its parent's local, and its guards are checked before anything
below it is loaded (so a type change stops the walk before an attribute of the wrong
type is read). Members of a ``dl.nn.Module`` are read where they live
(``m._modules['blocks']``, ``m._parameters['weight']``, ``seq._modules['0']``), never
through ``Module.__getattr__`` or ``ModuleList.__getitem__``.

Module subtrees are guarded by version tags (NOTE: [module version tags]): a guard is
*covered* when it checks the identity, type or constant value of something only the
Module API can change (a member reached from a module through module members only), or
the length/keys of a module container or table. The covered guards below a module
``R`` (``R`` itself guarded by identity) move into a function ``full_R``; per call,
``check`` only compares ``R._version_tag`` and the count of Parameter rebinds with what
they were when ``full_R`` last passed, and runs ``full_R`` (which then records the new
values) only when one differs. An unchanged model costs one comparison per module root,
however many parameters it has; a retag that changed nothing a graph read (a new
attribute, ``train()`` on a model already training) costs one full check, then the
entry is fast again. Everything else (inputs, globals, closure cells, a list
attribute's contents, class attributes) is checked on every call.

Optimizers are tag roots the same way (NOTE: [optimizer edit count] in optim/tracked.py):
below an optimizer guarded by identity, its instance attributes and the items of its
tracked containers (``param_groups``, each group and its ``params``, ``state`` and each
parameter's state dict, ``state.get(p)`` read with the guarded parameter ``p`` itself)
are covered, with the process-wide count of optimizer edits as the tag. A float held by a
tracked container is never covered (an lr schedule's store is not counted), nor is what
is read through a tensor (``p.grad``): those are checked on every call.

Only ``check`` is compiled with the entry; a full check compiles itself the first time
it runs, so a model that is never retagged never pays for it. Its recorded tag starts as
the one the module had when the trace first guarded its identity (``GuardSet`` notes
it, with the rebind count) if that is still the module's tag when the guards are
compiled, since then nothing below the module changed while the trace read it;
otherwise it starts unknown and the first cached call runs the full check.

A new kind of guard is one ``GuardKind`` entry in ``guards._KINDS``: its ``coverage``
says whether a tag can vouch for it (``"value"``: identity/type/constant of the member,
``"structure"``: length/keys of a module container, ``None``: never) and ``sources``
names other sources its check reads (they are loaded first).
"""
from __future__ import annotations

import builtins
import re

from ...nn.hooks import HOOK_TABLES
from ...nn.modules.container import ModuleDict, ModuleList, Sequential, _ListLike
from ...nn.module import Module
from ...nn.versioning import REBINDS
from ...optim.optimizer import Optimizer
from ...optim.tracked import EDITS, TRACKED_TYPES
from .sources import (AttrSource, ConstSource, GlobalSource, ItemSource, KeyPresentSource, LocalSource, Source,
                      TensorKeySource, local_identifier)

#: Attribute tables of a Module, in the order ``Module.__getattr__`` searches them.
MODULE_TABLES = ("_parameters", "_buffers", "_modules")

#: Dicts a Module owns whose every change retags it (member tables and hook tables).
RETAGGING_TABLES = MODULE_TABLES + HOOK_TABLES

#: Containers whose ``c[i]`` is ``c._modules[str(i)]`` while their keys are positional.
_POSITIONAL_GETITEM = {ModuleList: _ListLike.__getitem__, Sequential: Sequential.__getitem__}

_UNKNOWN = object()


class Node:
    """One source in the tree: how it loads from its parent, its guards and its coverage.

    Attributes:
        step: code loading the value from the parent's local ``{p}`` (or, for a root,
            the source's own expression).
        value: the object at build time (``_UNKNOWN`` if it could not be read).
        member: the step reads state that only the Module API changes (a module's
            member or table, a module container's item, an item of a tuple).
        linked: the value is registered in the module it was read from (a submodule or a
            module table): the Module API retags that module when the value changes.
        covered_by: the tag root that vouches for this node's value guards, or None.
        scope: the tag root that vouches for member steps below this node, or None.
        tag: for a tag root, the expression of its tag over its local ``{v}``.
        constants: names the step uses besides the parent's local.
    """

    def __init__(self, source: Source, parent: "Node | None", step: str, value, member=False, linked=False):
        self.source, self.parent, self.step, self.value = source, parent, step, value
        self.member, self.linked = member, linked
        self.children: list = []
        self.guards: list = []
        self.covered_by: Node | None = None
        self.scope: Node | None = None
        self.tag: str | None = None
        self.constants: dict = {}
        if parent is not None:
            parent.children.append(self)


#: How a tag root's tag is read: a module's own tag, or the count of every optimizer's
#: edits (NOTE: [optimizer edit count] in optim/tracked.py; the root's identity is guarded).
MODULE_TAG = "{v}._version_tag"
OPTIMIZER_TAG = "__dl_optedits.count"


def build(guards, names: tuple, values: tuple, f_globals: dict, kinds: dict) -> tuple:
    """``(roots, nodes)``: the tree of ``guards``' sources, each guard on its source's node.

    ``values`` are the frame's values the guards were made for (None: unknown, then no
    member reads are direct and no tags are used); ``nodes`` maps source expressions, and
    each guard object, to nodes.
    """
    local_values = dict(zip(map(local_identifier, names), values)) if values is not None else {}
    namespace = {"__dl_G": f_globals, "__dl_B": builtins.__dict__}
    nodes: dict = {}
    roots: list = []

    def node_for_path(source: Source) -> Node:
        key = source.expr()
        base = source.base if isinstance(source, (AttrSource, ItemSource, KeyPresentSource)) else None
        if base is None:
            namespace.update(source.constants())
            value = _root_value(source, key, namespace, local_values) if values is not None else _UNKNOWN
            node = Node(source, None, key, value)
            roots.append(node)
        else:
            node = _child(node_for(base), source)
        nodes[key] = node
        return node

    identities = {g.source.expr(): g.expected for g in guards if g.kind == "ID_MATCH"}

    def node_for(source: Source) -> Node:
        key = source.expr()
        node = nodes.get(key)
        if node is not None:
            return node
        if isinstance(source, TensorKeySource) and source.key.expr() in identities:
            node = nodes[key] = _keyed_child(node_for(source.base), source, identities[source.key.expr()])
            return node
        return node_for_path(source)

    try:
        for guard in guards:
            node = nodes[guard] = node_for(guard.source)
            node.guards.append(guard)
            for other in kinds[guard.kind].sources(guard.expected):
                node_for(other)
    finally:
        del node_for, node_for_path  # the two closures hold each other (and the frame's values)
    for root in roots:
        _assign_coverage(root)
    return roots, nodes


def dismantle(nodes: dict) -> None:
    """Unlink a tree once its program is generated: parents and children refer to each
    other, and each node holds the value it was built for (a user's tensor)."""
    for node in nodes.values():
        node.parent = node.covered_by = node.scope = None
        node.children = []
        node.value = _UNKNOWN


def _plain_module(obj) -> bool:
    """A Module whose attribute protocol is Module's own (a subclass overriding
    ``__setattr__``/``__delattr__``/``__getattr__`` may bypass the tags or the tables)."""
    cls = type(obj)
    return (isinstance(obj, Module) and cls.__setattr__ is Module.__setattr__
            and cls.__delattr__ is Module.__delattr__ and cls.__getattr__ is Module.__getattr__)


def _plain_optimizer(obj) -> bool:
    """An Optimizer whose attribute sets are Optimizer's own (each counts as an edit)."""
    cls = type(obj)
    return isinstance(obj, Optimizer) and cls.__setattr__ is Optimizer.__setattr__ and (
        cls.__delattr__ is Optimizer.__delattr__)


def _keyed_child(parent: Node, source: TensorKeySource, key) -> Node:
    """``state.get(p)`` for a key ``p`` whose identity is guarded: read with ``p`` itself,
    so the entry hangs below ``state`` (and its edit count can vouch for it)."""
    name = f"__dl_key{id(key)}"
    owner = parent.value
    value = _read(lambda: owner.get(key))
    node = Node(source, parent, f"{{p}}.get({name})", value, type(owner) in TRACKED_TYPES)
    node.constants[name] = key
    return node


def _child(parent: Node, source) -> Node:
    """The node of ``source`` (an attribute or item of ``parent``'s value, or whether it has
    a key), read directly if it can be."""
    owner = parent.value
    if isinstance(source, KeyPresentSource):  # a member where the dict's items are
        table = parent.linked and isinstance(parent.source, AttrSource) and (
            parent.source.attr in RETAGGING_TABLES or parent.source.attr == "__dict__")
        return Node(source, parent, f"({source.key!r} in {{p}})", _read(lambda: source.key in owner),
                    table or type(owner) in TRACKED_TYPES)
    if type(owner) in TRACKED_TYPES or (_plain_optimizer(owner) and isinstance(source, AttrSource)):
        return _optimizer_child(parent, source)
    module = _plain_module(owner)
    if isinstance(source, AttrSource):
        name = source.attr
        table = _module_table_of(owner, name) if module else None
        if table is not None:
            return Node(source, parent, f"{{p}}.{table}[{name!r}]", owner.__dict__[table][name], True,
                        table == "_modules")
        value = _read(lambda: getattr(owner, name))
        if module and (name in RETAGGING_TABLES or name == "__dict__"):  # Module.__setattr__ retags
            return Node(source, parent, f"{{p}}.{name}", value, True, True)
        member = (module and _in_instance_dict(owner, name)) or isinstance(owner, tuple)
        return Node(source, parent, f"{{p}}.{name}", value, member)
    key = source.key
    direct = _container_key(owner, key) if module else None
    if direct is not None:
        return Node(source, parent, f"{{p}}._modules[{direct!r}]", owner.__dict__["_modules"][direct], True, True)
    value = _read(lambda: owner[key])
    table = parent.linked and isinstance(parent.source, AttrSource) and parent.source.attr in RETAGGING_TABLES
    linked = table and parent.source.attr == "_modules"
    return Node(source, parent, f"{{p}}[{key!r}]", value, table or isinstance(owner, tuple), linked)


def _optimizer_child(parent: Node, source) -> Node:
    """An item of a tracked container, or an attribute of an optimizer: a member when
    only a counted edit can change it (NOTE: [optimizer edit count])."""
    owner = parent.value
    if isinstance(source, AttrSource):
        name = source.attr
        member = name == "default_factory" if type(owner) in TRACKED_TYPES else _in_instance_dict(owner, name)
        return Node(source, parent, f"{{p}}.{name}", _read(lambda: getattr(owner, name)), member)
    key = source.key
    return Node(source, parent, f"{{p}}[{key!r}]", _read(lambda: owner[key]), True)


def _root_value(source, key: str, namespace: dict, local_values: dict):
    """The value of a root source for the call the guards were made for."""
    if isinstance(source, LocalSource):
        return local_values.get(source.expr(), _UNKNOWN)
    if isinstance(source, GlobalSource):
        return namespace["__dl_G"].get(source.global_name, _UNKNOWN)
    if isinstance(source, ConstSource):
        return source.value
    return _read(lambda: eval(key, namespace, local_values))


def _read(load):
    try:
        return load()
    except Exception:
        return _UNKNOWN


def _module_table_of(owner, name: str):
    """The table holding ``owner.name`` when plain attribute lookup would reach
    ``Module.__getattr__`` (nothing of that name on the class or in the instance)."""
    if name in owner.__dict__:
        return None
    if _class_attribute(type(owner), name) is not _UNKNOWN:
        return None
    for table in MODULE_TABLES:
        members = owner.__dict__.get(table)
        if members is not None and name in members:
            return table
    return None


def _in_instance_dict(owner, name: str) -> bool:
    """``owner.name`` is read from the instance ``__dict__`` (no data descriptor on the class)."""
    if name not in owner.__dict__:
        return False
    on_class = _class_attribute(type(owner), name)
    return on_class is _UNKNOWN or not hasattr(type(on_class), "__set__")


def _class_attribute(cls, name: str):
    """What ``cls`` or a base defines as ``name`` (no descriptor run), or ``_UNKNOWN``."""
    for klass in cls.__mro__:
        if name in klass.__dict__:
            return klass.__dict__[name]
    return _UNKNOWN


def _container_key(owner, key):
    """The ``_modules`` key that ``owner[key]`` reads, when it is a plain module container."""
    if isinstance(owner, ModuleDict) and type(owner).__getitem__ is ModuleDict.__getitem__:
        return key if isinstance(key, str) and key in owner.__dict__["_modules"] else None
    for cls, getitem in _POSITIONAL_GETITEM.items():
        if isinstance(owner, cls) and type(owner).__getitem__ is getitem:
            keys = list(owner.__dict__["_modules"])
            if type(key) is int and 0 <= key < len(keys) and keys[key] == str(key):
                return str(key)
    return None


def _assign_coverage(root: Node) -> None:
    """Set ``covered_by`` and ``scope`` on ``root`` and every node below it (pre-order)."""
    pending = [root]
    while pending:
        node = pending.pop()
        parent = node.parent
        if parent is not None and parent.scope is not None and node.member and not (
                type(node.value) is float and type(parent.value) in TRACKED_TYPES):
            node.covered_by = parent.scope  # an optimizer's floats are checked per call: lr schedules do not count
        root = node.covered_by
        if root is not None and (node.linked or type(node.value) is tuple or (
                root.tag == OPTIMIZER_TAG and type(node.value) in TRACKED_TYPES)):
            node.scope = root  # what is below stays the tag root's business
        elif any(g.kind == "ID_MATCH" for g in node.guards) and (
                _plain_module(node.value) or _plain_optimizer(node.value)):
            node.scope = node  # a tag root of its own: its identity is checked before its tag
            node.tag = MODULE_TAG if isinstance(node.value, Module) else OPTIMIZER_TAG
        pending.extend(reversed(node.children))


def covering_root(guard, nodes: dict, kinds: dict) -> Node | None:
    """The tag root whose tag vouches for ``guard``, or None if it is checked on every call."""
    kind = kinds[guard.kind]
    node = nodes[guard]
    root = node.covered_by
    if root is None or kind.coverage is None:
        return None
    if kind.coverage == "structure" and node.scope is not root:
        return None  # e.g. the length of a list attribute: the list changes without the module
    if any(nodes[other.expr()].covered_by is not root for other in kind.sources(guard.expected)):
        return None
    return root


def current_tag(root):
    """The tag a module or optimizer root has now (NOTE: [guard tree])."""
    return root.__dict__.get("_version_tag") if isinstance(root, Module) else EDITS.count


class _Namer:
    """Names in the generated code: ``namer(value)`` a constant, ``namer.load(source)`` a node's local."""

    def __init__(self, nodes: dict):
        self.constants: dict = {}
        self._by_id: dict = {}
        self.nodes = nodes
        self.locals: dict = {}  # node -> local name, in the function being generated

    def __call__(self, value) -> str:
        name = self._by_id.get(id(value))
        if name is None:
            name = self._by_id[id(value)] = f"__dl_c{len(self.constants)}"
            self.constants[name] = value
        return name

    def load(self, source: Source) -> str:
        return self.locals[self.nodes[source.expr()]]


class _Conjunction:
    """The body of one generated function: one ``and`` of loads and checks, in walk order.

    A load is the term ``(v := expr) is v`` (always true), so the whole check stays one
    expression, which Python compiles faster than a statement per load and check.
    """

    def __init__(self):
        self.terms: list = []

    def load(self, local: str, expr: str) -> None:
        self.terms.append(f"({local} := {expr}) is {local}")

    def require(self, checks: list) -> None:
        self.terms.extend(f"({check})" for check in checks)

    def render(self, indent: str) -> str:
        return f" and\n{indent}".join(self.terms) if self.terms else "True"


class GuardProgram:
    """The generated code of one entry's guards (see NOTE: [guard tree]).

    Attributes:
        check_source: the source of ``check(values) -> bool``, run on every call.
        full_sources: ``{name: source}`` of each tag root's full check, compiled only the
            first time it runs (after a retag): most models never need it.
        namespace: the globals of every function: constants, each root's recorded
            ``__dl_tag{k}``/``__dl_rb{k}``, and the full checks (lazily compiled).
    """

    def __init__(self, check_source: str, full_sources: dict, namespace: dict):
        self.check_source, self.full_sources, self.namespace = check_source, full_sources, namespace

    @property
    def source(self) -> str:
        return "\n".join([self.check_source, *self.full_sources.values()])

    def compile(self):
        """The ``check`` function; each full check compiles itself on its first call."""
        for name, source in self.full_sources.items():
            self.namespace[name] = _LazyFunction(name, source, self.namespace)
        exec(compile(self.check_source, "<dynamo_lite guards>", "exec"), self.namespace)
        return self.namespace["check"]


class _LazyFunction:
    """Stands for a generated function until its first call, then compiles and replaces itself."""

    def __init__(self, name: str, source: str, namespace: dict):
        self.name, self.source, self.namespace = name, source, namespace

    def __call__(self, *args):
        exec(compile(self.source, f"<dynamo_lite guards: {self.name}>", "exec"), self.namespace)
        return self.namespace[self.name](*args)


def generate(roots: list, nodes: dict, guards, names: tuple, kinds: dict, constants: dict,
             validated_tags: dict) -> GuardProgram:
    """The program checking ``guards`` (see NOTE: [guard tree]).

    Args:
        constants: names the sources' expressions use (``__dl_G``, ``__dl_K...``).
        validated_tags: ``id(module) -> tag`` of modules whose guards are known to hold
            while their tag is unchanged (read before tracing read their members); their
            recorded tag starts there, the others' full check runs on the first call.
    """
    namer = _Namer(nodes)
    namer.constants.update(constants)
    per_call, by_root = [], {}
    for guard in guards:
        root = covering_root(guard, nodes, kinds)
        if root is None:
            per_call.append(guard)
        else:
            by_root.setdefault(root, []).append(guard)
    numbers = {root: i for i, root in enumerate(by_root)}

    def needed_by(guard_list, extra=()) -> set:
        needed = set(extra)
        for guard in guard_list:
            needed.add(nodes[guard])
            needed.update(nodes[o.expr()] for o in kinds[guard.kind].sources(guard.expected))
        for node in list(needed):
            while node.parent is not None and node.parent not in needed:
                node = node.parent
                needed.add(node)
        return needed

    def body(fn: _Conjunction, start: list, guard_list: list, needed: set, tags: bool) -> None:
        """Loads and checks of ``guard_list``, depth first from the ``start`` nodes."""
        own = {}
        crossing = []
        for guard in guard_list:
            if kinds[guard.kind].sources(guard.expected):
                crossing.append(guard)
            else:
                own.setdefault(nodes[guard], []).append(guard)
        shared = {nodes[other.expr()] for g in crossing for other in (g.source, *kinds[g.kind].sources(g.expected))}
        pending = [n for n in reversed(start) if n in needed]
        while pending:
            node = pending.pop()
            children = [n for n in node.children if n in needed]
            local = namer.locals.get(node)
            if local is None and node.parent is None and node.step.isidentifier():
                local = namer.locals[node] = node.step  # a constant's name: nothing to load
            if local is None:
                local = f"__dl_v{len(namer.locals)}"
                parent_local = namer.locals[node.parent] if node.parent is not None else None
                expr = node.step.format(p=parent_local) if parent_local else f"({node.step})"
                checks = [kinds[g.kind].code(local, g.expected, namer) for g in own.get(node, ())]
                if (len(checks) == 1 and not children and node not in shared and node not in numbers
                        and len(re.findall(rf"\b{local}\b", checks[0])) == 1):
                    fn.require([re.sub(rf"\b{local}\b", lambda _: expr, checks[0])])  # read once: no local
                    continue
                namer.locals[node] = local
                fn.load(local, expr)
            fn.require([kinds[g.kind].code(local, g.expected, namer) for g in own.get(node, ())])
            if tags and node in numbers:
                k = numbers[node]
                fn.require([f"{node.tag.format(v=local)} == __dl_tag{k} and __dl_rebinds.count == __dl_rb{k} "
                            f"or __dl_full{k}({local})"])
            pending.extend(reversed(children))
        fn.require([kinds[g.kind].code(namer.load(g.source), g.expected, namer) for g in crossing])

    namespace = {"__dl_rebinds": REBINDS, "__dl_optedits": EDITS}
    for node in set(nodes.values()):
        namer.constants.update(node.constants)
    full_sources = {}
    for root, k in numbers.items():
        fn = _Conjunction()
        namer.locals = {root: "__dl_root"}
        body(fn, root.children, by_root[root], needed_by(by_root[root]), tags=False)
        full_sources[f"__dl_full{k}"] = "\n".join([
            f"def __dl_full{k}(__dl_root):",
            f"    global __dl_tag{k}, __dl_rb{k}",
            f"    __dl_tag, __dl_rb = {root.tag.format(v='__dl_root')}, __dl_rebinds.count",
            f"    if not ({fn.render(' ' * 12)}):",
            "        return False",
            f"    __dl_tag{k}, __dl_rb{k} = __dl_tag, __dl_rb",
            "    return True"]) + "\n"
        tag = validated_tags.get(id(root.value))
        known = tag is not None and current_tag(root.value) == tag
        namespace[f"__dl_tag{k}"] = tag if known else None
        namespace[f"__dl_rb{k}"] = validated_tags.get("rebinds") if known else None
    fn = _Conjunction()
    names = tuple(map(local_identifier, names))
    namer.locals = {root: root.source.expr() for root in roots if root.source.expr() in names}
    body(fn, roots, per_call, needed_by(per_call, numbers), tags=True)
    unpack = f"    {', '.join(names)}{',' if len(names) == 1 else ''} = __dl_values" if names else "    pass"
    check_source = "\n".join(["def check(__dl_values):", unpack, "    try:",
                               f"        return ({fn.render(' ' * 16)})",
                               "    except Exception:  # a guard that cannot be read rejects the call",
                               "        return False"]) + "\n"
    namespace.update(namer.constants)
    return GuardProgram(check_source, full_sources, namespace)
