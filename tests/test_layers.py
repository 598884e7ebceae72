"""Dependencies between lgembed's modules point downwards only (docs/DESIGN.md §2).

Every module under lgembed/ is parsed (ast), and every import counted: module level
and inside functions, relative imports resolved, `importlib.import_module("...")`
with a literal name too. Only imports under `if TYPE_CHECKING:` are left out (they
never run). The test asserts:

- no cycle in the module graph: no module imports one that imports it back,
  directly or around a loop (the failure names the loop);
- no import from the engine (`lgembed.pregel`) or the ports (`lgembed.checkpoint`,
  `lgembed.store`) into the builder (`lgembed.graph`) or the agent layer
  (`lgembed.prebuilt`);
- every import goes to the same or a lower layer of `LAYERS`.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "lgembed"

LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    # bottom first; a module belongs to the first entry whose prefix it starts with
    (
        "base",
        (
            "lgembed", "lgembed._engine", "lgembed._lazy", "lgembed._typing", "lgembed._constants", "lgembed.constants",
            "lgembed.warnings", "lgembed._ids", "lgembed._toml", "lgembed.errors", "lgembed.types",
            "lgembed.config", "lgembed.runtime", "lgembed.managed", "lgembed._schema",
            "lgembed.messages", "lgembed.messages._chunks", "lgembed._tool_args", "lgembed.tools",
        ),
    ),
    ("hot core", ("lgembed._channels", "lgembed._algo", "lgembed.channels")),
    ("ports", ("lgembed.checkpoint", "lgembed.store", "lgembed.cache")),
    ("engine", ("lgembed.pregel",)),
    ("builder", ("lgembed.graph", "lgembed.func")),
    ("agent", ("lgembed.models", "lgembed.prebuilt")),
    ("edge and bridge", ("lgembed.edge", "lgembed.bridge")),
    ("command and service", ("lgembed.cli", "lgembed.service", "lgembed.__main__")),
)


def _modules() -> dict[str, tuple[Path, bool]]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        is_package = parts[-1] == "__init__"
        if is_package:
            parts = parts[:-1]
        found[".".join(parts)] = (path, is_package)
    return found


MODULES = _modules()


def _known(name: str | None) -> str | None:
    """The longest prefix of `name` that is a module of the package, or None."""
    while name:
        if name in MODULES:
            return name
        name = name.rpartition(".")[0]
    return None


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If):
            test = node.test
            name = test.id if isinstance(test, ast.Name) else getattr(test, "attr", None)
            if name == "TYPE_CHECKING":
                for child in node.body:
                    skipped.update(id(n) for n in ast.walk(child))
    return skipped


def imports_of(module: str) -> set[str]:
    """The package modules `module` imports, anywhere in its source."""
    path, is_package = MODULES[module]
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    skipped = _type_checking_nodes(tree)
    out: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".") if is_package else module.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                origin = ".".join(base + ([node.module] if node.module else []))
            else:
                origin = node.module or ""
            # `from pkg import sub` imports the submodule pkg.sub
            targets = [f"{origin}.{alias.name}" if f"{origin}.{alias.name}" in MODULES else origin for alias in node.names]
        elif (
            isinstance(node, ast.Call)
            and getattr(node.func, "attr", getattr(node.func, "id", None)) == "import_module"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            targets = [node.args[0].value]
        for target in targets:
            known = _known(target) if target.startswith("lgembed") else None
            if known is not None and known != module:
                out.add(known)
    return out


GRAPH = {module: imports_of(module) for module in MODULES}


def layer_of(module: str) -> int:
    best, best_len = None, -1
    for index, (_name, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best_len:
                best, best_len = index, len(prefix)
    assert best is not None, f"{module} is in no layer of LAYERS: add it where it belongs"
    return best


def _cycle() -> list[str] | None:
    """A loop of imports, as the list of modules along it, or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(module: str) -> list[str] | None:
        state[module] = 1
        path.append(module)
        for target in sorted(GRAPH[module]):
            if state.get(target) == 1:
                return path[path.index(target) :] + [target]
            if target not in state:
                found = visit(target)
                if found:
                    return found
        path.pop()
        state[module] = 2
        return None

    for module in sorted(GRAPH):
        if module not in state:
            found = visit(module)
            if found:
                return found
    return None


def test_the_parser_sees_deferred_and_relative_imports():
    """The graph counts imports inside functions (e.g. the state API the Pregel
    methods load on demand)."""
    assert "lgembed.pregel._state" in GRAPH["lgembed.pregel.main"]
    assert "lgembed._engine" in GRAPH["lgembed"]


def test_no_import_cycle():
    cycle = _cycle()
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_engine_and_ports_do_not_import_the_builder_or_the_agent_layer():
    upward = sorted(
        f"{module} -> {target}"
        for module, targets in GRAPH.items()
        if module.startswith(("lgembed.pregel", "lgembed.checkpoint", "lgembed.store"))
        for target in targets
        if target.startswith(("lgembed.graph", "lgembed.prebuilt"))
    )
    assert upward == []


def test_imports_point_downwards():
    """docs/DESIGN.md §2's layers, bottom first: base values and errors, the hot core
    (channels, kernels), the ports (checkpoint, store), the engine, the builder, the
    agent layer, the edge layer and bridge, the command and service."""
    upward = sorted(
        f"{module} ({LAYERS[layer_of(module)][0]}) -> {target} ({LAYERS[layer_of(target)][0]})"
        for module, targets in GRAPH.items()
        for target in targets
        if layer_of(target) > layer_of(module)
    )
    assert upward == []
