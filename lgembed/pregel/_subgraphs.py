"""Which nodes run a subgraph: a subgraph node, or a compiled graph a node's function calls (G-1, G-5).

Why a module of its own: checkpointing (`_persist`: task states of a checkpoint),
the state API (`_state`: snapshots, updates) and `Pregel.get_subgraphs` all ask it;
living apart it is imported by each, and they no longer import each other for it.

Strategy: LangGraph finds the graphs a function calls from the function's source
(langchain-core's `get_function_nonlocals`); so does this module, once per function
(`_DETECTED`).
"""

from __future__ import annotations

import ast
import inspect
import textwrap
import weakref
from typing import Any

__all__ = ("find_subgraph", "node_subgraph")


class _NonLocals(ast.NodeVisitor):
    """Names a function body loads, dotted attribute chains included."""

    def __init__(self) -> None:
        self.loads: set[str] = set()
        self.stores: set[str] = set()

    def visit_Name(self, node: ast.Name) -> None:
        if isinstance(node.ctx, ast.Load):
            self.loads.add(node.id)
        elif isinstance(node.ctx, ast.Store):
            self.stores.add(node.id)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if not isinstance(node.ctx, ast.Load):
            return
        parent: Any = node.value
        attr_expr = node.attr
        while isinstance(parent, ast.Attribute):
            attr_expr = parent.attr + "." + attr_expr
            parent = parent.value
        if isinstance(parent, ast.Name):
            self.loads.add(parent.id + "." + attr_expr)
            self.loads.discard(parent.id)
        elif isinstance(parent, ast.Call):
            if isinstance(parent.func, ast.Name):
                self.loads.add(parent.func.id)
            else:
                parent = parent.func
                attr_expr = ""
                while isinstance(parent, ast.Attribute):
                    attr_expr = parent.attr + "." + attr_expr if attr_expr else parent.attr
                    parent = parent.value
                if isinstance(parent, ast.Name):
                    self.loads.add(parent.id + "." + attr_expr)


class _FunctionNonLocals(ast.NodeVisitor):
    def __init__(self) -> None:
        self.nonlocals: set[str] = set()

    def _function(self, node: ast.AST) -> None:
        visitor = _NonLocals()
        visitor.visit(node)
        self.nonlocals.update(visitor.loads - visitor.stores)

    visit_FunctionDef = visit_AsyncFunctionDef = visit_Lambda = _function


def _function_nonlocals(func: Any) -> list:
    """The global and closure values a function's source refers to (langchain-core's
    get_function_nonlocals): `sub.invoke` yields the bound method."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(func)))
        visitor = _FunctionNonLocals()
        visitor.visit(tree)
        wrapped = getattr(func, "__wrapped__", None)
        closure = inspect.getclosurevars(wrapped if wrapped is not None and callable(wrapped) else func)
        values: list = []
        for k, v in {**closure.globals, **closure.nonlocals}.items():
            if k in visitor.nonlocals:
                values.append(v)
            for kk in visitor.nonlocals:
                if "." in kk and kk.startswith(k):
                    vv = v
                    for part in kk.split(".")[1:]:
                        if vv is None:
                            break
                        try:
                            vv = getattr(vv, part)
                        except AttributeError:
                            break
                    else:
                        values.append(vv)
        return values
    except (SyntaxError, TypeError, OSError, SystemError):
        return []


def _is_graph(obj: Any) -> bool:
    try:
        return getattr(obj, "_lg_is_graph", False) is True
    except Exception:
        return False


def find_subgraph(runnable: Any) -> Any:
    """The compiled graph a node runs: the node itself, or one its function refers to
    (`lambda s: sub.invoke(s)`); graphs compiled with `checkpointer=False` do not count."""
    if _is_graph(runnable):
        return runnable if runnable.checkpointer is not False else None
    try:
        found = _function_nonlocals(runnable)
    except Exception:
        return None
    for nl in found:
        candidate = nl.__self__ if hasattr(nl, "__self__") else nl
        if _is_graph(candidate) and candidate.checkpointer is not False:
            return candidate
    return None


_DETECTED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def node_subgraph(node: Any) -> Any:
    """The subgraph whose checkpoints a node's tasks leave under `name:task_id`, or None."""
    if node is None:
        return None
    if node.subgraphs:
        sub = node.subgraphs[0]
        return None if sub.checkpointer is False else sub
    func = getattr(node.proc, "func", None)
    if func is None:
        return None
    try:
        return _DETECTED[func]
    except (KeyError, TypeError):
        pass
    sub = find_subgraph(func)
    try:
        _DETECTED[func] = sub
    except TypeError:
        pass
    return sub
