"""The package imports one way: no import cycle, few and explained deferred imports in frames/.

The graph is read from the source with ``ast``, so it sees every import: at module level,
inside functions and under ``TYPE_CHECKING`` alike (an import placed inside a function
still ties the two modules together; it only hides the cycle from the interpreter).

Edges, for a module M:
- ``import a.b`` and ``from a import b`` (b a module): M -> a.b.
- ``from a import name`` (name not a module): M -> the module that defines ``name``, found
  by following ``a``'s re-exports (``a/__init__.py`` importing it, also through ``*``).
- ``import dynamo_lite as dl`` then ``dl.nn.Linear``: M -> the module defining ``Linear``.
- A package's ``__init__`` is a module like the others: its imports are its edges.
Importing ``a.b`` also runs ``a/__init__``; that implicit edge is left out (as is
``import dynamo_lite`` inside the package, whose ``__init__`` is running already), or every
module would sit in one cycle through ``dynamo_lite/__init__.py``, which re-exports the
public API. What such a module then uses (``dl.relu``) is an edge like any other.
"""
from __future__ import annotations

import ast
import pathlib

ROOT = pathlib.Path(__file__).resolve().parent.parent
PACKAGE = "dynamo_lite"
# Source folders and the package name they are imported under (backends/ is installed as
# dynamo_lite.backends: pyproject's package-dir).
SOURCE_DIRS = {ROOT / "dynamo_lite": PACKAGE, ROOT / "backends": f"{PACKAGE}.backends"}
DEFERRED_IMPORT_LIMIT = 5  # imports inside functions allowed in dynamo_lite/frames/


def _modules() -> dict:
    """Module name -> (path, is_package) for every .py file of the package."""
    modules = {}
    for folder, prefix in SOURCE_DIRS.items():
        for path in sorted(folder.rglob("*.py")):
            parts = list(path.relative_to(folder).with_suffix("").parts)
            is_package = parts[-1] == "__init__"
            if is_package:
                parts.pop()
            modules[".".join([prefix, *parts])] = (path, is_package)
    return modules


MODULES = _modules()
TREES = {name: ast.parse(path.read_text(), str(path)) for name, (path, _) in MODULES.items()}


def _absolute(module: str, node: ast.ImportFrom) -> str:
    """The absolute module name a ``from ... import`` in ``module`` reads from."""
    if not node.level:
        return node.module or ""
    package = module if MODULES[module][1] else module.rpartition(".")[0]
    base = package.split(".")[: len(package.split(".")) - node.level + 1]
    return ".".join(base + ([node.module] if node.module else []))



def _top_level_names(module: str) -> dict:
    """Names a module binds at top level -> the module that defines each (re-exports followed)."""
    names: dict = {}
    tree = TREES[module]
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names[node.name] = module
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                for leaf in ast.walk(target):
                    if isinstance(leaf, ast.Name):
                        names[leaf.id] = module
        elif isinstance(node, ast.ImportFrom):
            source = _absolute(module, node)
            for alias in node.names:
                if alias.name == "*":
                    if source in MODULES:
                        star = _exports(source)
                        names.update({k: v for k, v in star.items() if not k.startswith("_")})
                else:
                    names[alias.asname or alias.name] = _defining_module(source, alias.name)
    return names


_EXPORTS: dict = {}


def _exports(module: str) -> dict:
    if module not in _EXPORTS:
        _EXPORTS[module] = {}  # a re-export loop ends here instead of recursing forever
        _EXPORTS[module] = _top_level_names(module)
    return _EXPORTS[module]


def _defining_module(source: str, name: str) -> str | None:
    """The module that ``from source import name`` depends on (None: outside the package)."""
    if f"{source}.{name}" in MODULES:
        return f"{source}.{name}"
    if source not in MODULES:
        return None
    return _exports(source).get(name, source)


def _longest_module(dotted: list) -> tuple:
    """The longest prefix of a dotted name that is a module, and the name after it."""
    for end in range(len(dotted), 0, -1):
        name = ".".join(dotted[:end])
        if name in MODULES:
            return name, dotted[end] if end < len(dotted) else None
    return None, None


def _attribute_chain(node: ast.Attribute) -> list:
    chain = []
    while isinstance(node, ast.Attribute):
        chain.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return []
    return [node.id, *reversed(chain)]


def _edges(module: str) -> dict:
    """Imported module -> line of the first import of it, for one module."""
    tree = TREES[module]
    edges: dict = {}
    module_aliases: dict = {}  # a local name bound to a package module by `import x as y`

    def add(target, line):
        if target and target != module and target in MODULES:
            edges.setdefault(target, line)

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] != PACKAGE:
                    continue
                if not module.startswith(f"{alias.name}."):  # a package around M already runs
                    add(alias.name, node.lineno)
                bound = alias.asname or alias.name.split(".")[0]
                module_aliases[bound] = alias.name if alias.asname else PACKAGE
        elif isinstance(node, ast.ImportFrom):
            source = _absolute(module, node)
            for alias in node.names:
                if alias.name == "*":
                    add(source, node.lineno)
                else:
                    target = _defining_module(source, alias.name)
                    add(target, node.lineno)
                    if f"{source}.{alias.name}" in MODULES:
                        module_aliases[alias.asname or alias.name] = f"{source}.{alias.name}"
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and not isinstance(getattr(node, "ctx", None), ast.Store):
            chain = _attribute_chain(node)
            if chain and chain[0] in module_aliases:
                dotted = module_aliases[chain[0]].split(".") + chain[1:]
                found, attr = _longest_module(dotted)
                if found is not None:
                    add(_exports(found).get(attr, found) if attr else found, node.lineno)
    return edges


GRAPH = {name: _edges(name) for name in MODULES}


def _cycles(graph: dict) -> list:
    """Strongly connected components of more than one module (Tarjan's, iterative)."""
    index, low, on_stack, stack, components = {}, {}, set(), [], []
    counter = 0
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(graph[root]))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(graph[child])))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    components.append(sorted(component))
    return components


def _one_cycle(graph: dict, component: list) -> list:
    """A concrete cycle inside a strongly connected component, as a list of modules."""
    members = set(component)
    start = component[0]
    parents = {start: None}
    frontier = [start]
    while frontier:  # breadth-first from start until an edge returns to it
        following = []
        for node in frontier:
            for child in graph[node]:
                if child == start:
                    path = [node]
                    while parents[path[-1]] is not None:
                        path.append(parents[path[-1]])
                    return [*reversed(path), start]
                if child in members and child not in parents:
                    parents[child] = node
                    following.append(child)
        frontier = following
    return component


def _describe(graph: dict, cycle: list) -> str:
    steps = [f"{a} (line {graph[a][b]}) -> {b}" for a, b in zip(cycle, cycle[1:])]
    return "\n    ".join(steps)


def test_no_import_cycles():
    cycles = [_one_cycle(GRAPH, component) for component in _cycles(GRAPH)]
    report = "\n".join(f"  cycle of {len(c) - 1} modules:\n    {_describe(GRAPH, c)}" for c in cycles)
    assert not cycles, f"import cycles in the package:\n{report}"


def test_graph_sees_deferred_and_package_edges():
    # The checker itself: a function-level import, a TYPE_CHECKING import, a name taken
    # from a package and `dl.X` each make an edge (otherwise the test above could not fail).
    sample = "dynamo_lite.frames.api"
    assert "dynamo_lite.frames.runtime.hook" in GRAPH[sample]
    assert "dynamo_lite.tensor.tensor" in GRAPH[PACKAGE]  # __init__ re-exports Tensor
    assert _defining_module(PACKAGE, "Tensor") == "dynamo_lite.tensor.tensor"
    assert _cycles({"a": {"b": 1}, "b": {"c": 1}, "c": {"a": 1}, "d": {}}) == [["a", "b", "c"]]


def _function_imports(tree: ast.Module) -> list:
    """Import statements not at module level (inside functions or TYPE_CHECKING blocks)."""
    top = {id(node) for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom))}
    return [
        node for node in ast.walk(tree)
        if isinstance(node, (ast.Import, ast.ImportFrom)) and id(node) not in top
    ]


def test_few_deferred_imports_in_frames_each_explained():
    deferred, unexplained = [], []
    for name, (path, _) in MODULES.items():
        if not name.startswith(f"{PACKAGE}.frames"):
            continue
        lines = path.read_text().splitlines()
        for node in _function_imports(TREES[name]):
            where = f"{path.relative_to(ROOT)}:{node.lineno}"
            deferred.append(where)
            line, above = lines[node.lineno - 1], lines[node.lineno - 2].strip()
            if "#" not in line and not above.startswith("#"):
                unexplained.append(where)
    assert len(deferred) <= DEFERRED_IMPORT_LIMIT, f"{len(deferred)} deferred imports in frames/: {deferred}"
    assert not unexplained, f"deferred imports without a comment saying why: {unexplained}"


# Entry points that run the package as a program may use the public API through the root.
ROOT_IMPORT_ALLOWED = {f"{PACKAGE}.cli", f"{PACKAGE}.__main__", f"{PACKAGE}.demo_train"}


def _root_imports(module: str) -> list:
    """Lines where ``module`` imports the package root (``import dynamo_lite``, ``from dynamo_lite import name``).

    ``from dynamo_lite import nn`` (a subpackage) and ``import dynamo_lite.nn.functional as F``
    name a module below the root and are not counted; a name the root ``__init__`` binds is.
    """
    lines = []
    for node in ast.walk(TREES[module]):
        if isinstance(node, ast.Import):
            lines += [node.lineno for alias in node.names
                      if alias.name == PACKAGE or (alias.name.startswith(f"{PACKAGE}.") and not alias.asname)]
        elif isinstance(node, ast.ImportFrom) and _absolute(module, node) == PACKAGE:
            lines += [node.lineno for alias in node.names if f"{PACKAGE}.{alias.name}" not in MODULES]
    return lines


def test_no_module_imports_the_package_root():
    found = [f"{name}:{line}" for name in MODULES if name not in ROOT_IMPORT_ALLOWED for line in _root_imports(name)]
    assert not found, f"{len(found)} imports of the package root outside the entry points: {found}"


def test_root_import_check_counts_each_form():
    # The checker itself: each form of a root import is counted, submodule imports are not.
    def count(source: str, module: str = f"{PACKAGE}.nn.sample") -> int:
        TREES[module] = ast.parse(source)
        MODULES.setdefault(module, (ROOT / "dynamo_lite/nn/sample.py", False))
        try:
            return len(_root_imports(module))
        finally:
            del TREES[module], MODULES[module]

    assert count("import dynamo_lite as dl") == 1
    assert count("import dynamo_lite") == 1
    assert count("def f():\n    import dynamo_lite.nn\n") == 1  # binds the root name
    assert count("from dynamo_lite import Tensor, nn") == 1
    assert count("from .. import Tensor") == 1
    assert count("from .. import ops\nfrom ..ops.core import api as ops\nimport dynamo_lite.nn.functional as F") == 0
