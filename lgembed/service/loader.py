"""Turning a graph reference (`MODULE:ATTR`, `FILE.py:ATTR`) into a compiled graph.

Why this module exists: `lgembed run`, `lgembed graph` and `lgembed serve` all start from
such a reference, and they must agree on what it means: where a module or a file is looked
up, the module name a file gets (a class of that file stored in a checkpoint by `run` must
load in `serve` and back), and which objects count as a graph. One loader
(`load_target`) and one resolver (`resolve_graph`) serve all three; each caller turns
`LoadError` into its own error at its call site (the CLI's `CliError`/`UsageError`, the
service's `ConfigError`), so exit codes stay theirs.

Why two policies for a compiled graph that brings its own checkpointer (`own_checkpointer`):

- "refuse" (`lgembed run --db`): a one-off run the user controls. Attaching a second saver
  would split the graph's threads between two stores, and the fix is in the user's hands
  (drop `--db`, or point at the builder).
- "replace" (`lgembed serve`): the service must checkpoint into its own LMDB environment,
  since draining, resuming cut-off runs and the run records all rely on it, and a service
  is started at boot from a config: refusing would leave the device without its graph
  because of a checkpointer the developer used while writing it. The graph's own
  checkpointer is replaced, with a warning in the log.
"""

from __future__ import annotations

import os
import sys
from typing import Any

__all__ = (
    "OWN_CHECKPOINTER_POLICIES",
    "BadReferenceError",
    "LoadError",
    "OwnCheckpointerError",
    "describe",
    "is_builder",
    "is_compiled",
    "load_target",
    "resolve_graph",
)

OWN_CHECKPOINTER_POLICIES = ("refuse", "replace")
"""Values of `resolve_graph`'s `own_checkpointer` (see the module docstring for why)."""
FILE_MODULE_PREFIX = "_lgembed_graph_"
# a FILE.py is loaded as module `_lgembed_graph_<stem>`, whichever command loads it


class LoadError(Exception):
    """A graph reference cannot be turned into a graph; the message says what was being
    done, what failed and how to fix it.

    Attributes:
        spec: the reference ("MODULE:ATTR" or "FILE.py:ATTR").
    """

    def __init__(self, message: str, spec: str) -> None:
        super().__init__(message)
        self.spec = spec


class BadReferenceError(LoadError, ValueError):
    """The reference itself is malformed (no `:ATTR` part)."""


class OwnCheckpointerError(LoadError):
    """A compiled graph has a checkpointer of its own and the policy is "refuse".

    Attributes:
        own: the class name of the graph's own checkpointer.
    """

    def __init__(self, message: str, spec: str, own: str) -> None:
        super().__init__(message, spec)
        self.own = own


def describe(exc: BaseException) -> str:
    """`ClassName: text` of an exception (the class alone when it has no text)."""
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


# --- what an object is -------------------------------------------------------------------


def is_compiled(obj: Any) -> bool:
    """Whether `obj` is a compiled graph (lgembed's, or anything that streams and has state)."""
    if isinstance(obj, type):
        return False
    return getattr(obj, "_lg_is_graph", False) is True or (hasattr(obj, "stream") and hasattr(obj, "get_state"))


def is_builder(obj: Any) -> bool:
    """Whether `obj` is a graph builder (a `StateGraph` instance: it has add_node and compile)."""
    return not isinstance(obj, type) and hasattr(obj, "compile") and hasattr(obj, "add_node")


def _graph_like(obj: Any) -> bool:
    return is_compiled(obj) or is_builder(obj)


# --- loading --------------------------------------------------------------------------------


def load_target(spec: str, base_dir: str | None = None) -> Any:
    """The object `MODULE:ATTR` or `FILE.py:ATTR` names (ATTR may be dotted: "mod:holder.graph").

    A FILE.py (a name ending in .py or holding a path separator) is looked up relative to
    `base_dir` and loaded as module `_lgembed_graph_<stem>`, with its directory first on
    `sys.path` so that it can import its neighbours; a file loaded already under that name
    is not loaded again (two graphs of one file). A MODULE is imported with `base_dir` on
    `sys.path` (as `python -m` does for the working directory).

    Args:
        spec: the reference.
        base_dir: the directory a relative FILE.py and a bare MODULE are looked up in
            (default: the working directory).

    Raises:
        BadReferenceError: `spec` has no `:ATTR` part.
        LoadError: the file does not exist, the module fails to import (the message
            carries the exception's class and text; the exception is chained), or it has
            no such attribute (the message lists the graphs and builders it has).
    """
    module_part, sep, attr = spec.rpartition(":")
    if not sep or not module_part or not attr:
        msg = f"'{spec}': expected MODULE:ATTR or path/to/file.py:ATTR (e.g. examples.thermostat_service:graph)"
        raise BadReferenceError(msg, spec)
    cwd = os.getcwd()
    base_dir = cwd if base_dir is None else base_dir
    try:
        if module_part.endswith(".py") or os.sep in module_part:
            module = _load_file(spec, module_part, os.path.abspath(os.path.join(base_dir, module_part)), base_dir)
        else:
            # "" on sys.path is the working directory already
            if base_dir not in sys.path and not (base_dir == cwd and "" in sys.path):
                sys.path.insert(0, base_dir)
            import importlib

            module = importlib.import_module(module_part)
    except LoadError:
        raise
    except ModuleNotFoundError as e:
        msg = (
            f"Loading graph '{spec}': {describe(e)}. Fix: install the module, run from the directory "
            "that holds it, or set PYTHONPATH"
        )
        raise LoadError(msg, spec) from e
    except BaseException as e:  # any failure of user code at import is reported
        if isinstance(e, (KeyboardInterrupt, SystemExit)):
            raise
        msg = f"Loading graph '{spec}': importing {module_part!r} failed: {describe(e)}"
        raise LoadError(msg, spec) from e
    obj: Any = module
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            names = sorted(n for n, v in vars(module).items() if not n.startswith("_") and _graph_like(v))
            hint = f" (graphs and builders in it: {', '.join(names)})" if names else ""
            msg = f"Loading graph '{spec}': {module_part!r} has no attribute {attr!r}{hint}"
            raise LoadError(msg, spec) from None
    return obj


def _load_file(spec: str, module_part: str, path: str, base_dir: str) -> Any:
    """The module of a FILE.py reference (see `load_target`)."""
    import importlib.util

    if not os.path.isfile(path):
        msg = (
            f"Loading graph '{spec}': no such file {module_part!r} ({path}). Fix: pass an existing .py file, "
            f"relative to {base_dir} or absolute"
        )
        raise LoadError(msg, spec)
    folder = os.path.dirname(path)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    name = FILE_MODULE_PREFIX + os.path.splitext(os.path.basename(path))[0]
    module = sys.modules.get(name)
    if module is not None and getattr(module, "__file__", None) == path:
        return module
    loader_spec = importlib.util.spec_from_file_location(name, path)
    if loader_spec is None or loader_spec.loader is None:
        msg = f"Loading graph '{spec}': {module_part!r} cannot be loaded as a Python module"
        raise LoadError(msg, spec)
    module = importlib.util.module_from_spec(loader_spec)
    sys.modules[name] = module
    try:
        loader_spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


# --- resolving --------------------------------------------------------------------------------


def resolve_graph(
    obj: Any,
    spec: str,
    *,
    checkpointer: Any = None,
    store: Any = None,
    device: Any = None,
    own_checkpointer: str = "refuse",
) -> Any:
    """A compiled graph from what a reference named.

    - a builder (`StateGraph`): compiled with `checkpointer` and `store`;
    - a compiled graph, when `checkpointer` is given: a copy with `checkpointer` (whose
      serializer is told the graph's schema types, as `compile()` does) and, when the graph
      has none, `store`, as LangGraph's server attaches its own to the graphs it serves.
      A checkpointer of the graph's own is refused or replaced (`own_checkpointer`);
    - a compiled graph, without `checkpointer`: as it is;
    - a callable returning one of these (a factory): called with `device` when it has a
      required positional parameter, or when a device is given and it takes one
      positionally; else with no argument (so a factory's optional parameter keeps its
      default when there is no device).

    Args:
        obj: what `load_target` returned.
        spec: the reference, for messages.
        checkpointer: the saver the graph must use, or None.
        store: the store a builder is compiled with (and a compiled graph gets when it has none).
        device: the `Device` a factory is given.
        own_checkpointer: "refuse" or "replace" (see the module docstring for why both).

    Raises:
        ValueError: `own_checkpointer` is not one of OWN_CHECKPOINTER_POLICIES.
        OwnCheckpointerError: a compiled graph with its own checkpointer, `checkpointer`
            given and the policy "refuse".
        LoadError: `obj` is none of the above, or the factory or `compile()` fails (the
            cause is chained).
    """
    if own_checkpointer not in OWN_CHECKPOINTER_POLICIES:
        msg = f"'own_checkpointer' must be one of {OWN_CHECKPOINTER_POLICIES} (got {own_checkpointer!r})"
        raise ValueError(msg)
    if not _graph_like(obj) and callable(obj):
        try:
            obj = obj(device) if _wants_device(obj, device) else obj()
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as e:  # user code
            msg = f"Loading graph '{spec}': calling the factory failed: {describe(e)}"
            raise LoadError(msg, spec) from e
    if is_builder(obj):
        try:
            return obj.compile(checkpointer=checkpointer, store=store)
        except Exception as e:  # compile-time validation of user graphs
            msg = f"Compiling graph '{spec}': {describe(e)}"
            raise LoadError(msg, spec) from e
    if not is_compiled(obj):
        msg = (
            f"Loading graph '{spec}': it is a {type(obj).__name__}, not a graph. Fix: point at a StateGraph "
            "builder, a compiled graph, or a function (taking the Device or nothing) returning one"
        )
        raise LoadError(msg, spec)
    if checkpointer is None:
        return obj
    own = getattr(obj, "checkpointer", None)
    if own is not None and not isinstance(own, bool) and own is not checkpointer:
        name = type(own).__name__
        if own_checkpointer == "refuse":
            msg = (
                f"'{spec}' is a graph compiled with its own checkpointer ({name}); a second one would split "
                "its threads. Fix: use its own, or point at the StateGraph builder (or compile it without a "
                "checkpointer)"
            )
            raise OwnCheckpointerError(msg, spec, name)
        import logging

        where = getattr(checkpointer, "path", None)
        logging.getLogger("lgembed.service").warning(
            "graph '%s' was compiled with its own checkpointer %s; it uses %s%s instead",
            spec, name, type(checkpointer).__name__, f" on {where}" if where else "",
        )  # fmt: skip
    builder = getattr(obj, "builder", None)
    if builder is not None and hasattr(checkpointer, "with_allowlist"):
        from lgembed.graph._fields import schema_value_types

        schemas = [builder.state_schema, builder.input_schema, builder.output_schema, builder.context_schema]
        schemas.extend(node.input_schema for node in builder.nodes.values())
        types = schema_value_types(schemas)
        if types:
            checkpointer = checkpointer.with_allowlist(types)
    update = {"checkpointer": checkpointer}
    if store is not None and getattr(obj, "store", None) is None:
        update["store"] = store
    return obj.copy(update=update)


def _wants_device(fn: Any, device: Any) -> bool:
    """Whether a factory is called with the device (see `resolve_graph`)."""
    import inspect

    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return device is not None
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.VAR_POSITIONAL)]
    required = [p for p in positional if p.kind != p.VAR_POSITIONAL and p.default is p.empty]
    return bool(required) or (device is not None and bool(positional))
