"""Conditional edges: a router callable, its path map, and how its result becomes writes (N-4, N-5)."""

from __future__ import annotations

from inspect import isfunction, ismethod, signature
from typing import Any, Literal, NamedTuple, get_args, get_origin, get_type_hints

from lgembed._constants import END, START, TASKS
from lgembed.errors import InvalidUpdateError
from lgembed.pregel._call import NodeCallable
from lgembed.types import Send


def _router_function(path: Any) -> Any:
    if isfunction(path) or ismethod(path):
        return path
    call = getattr(path, "__call__", None)
    if call is not None and ismethod(call):
        return call
    return None


def _branch_input_schema(path: Any) -> Any:
    """The router's first-parameter annotation when it is a class with type hints."""
    try:
        func = _router_function(path)
        if func is None:
            return None
        hints = get_type_hints(func)
        if not hints:
            return None
        first = next(iter(signature(func).parameters.keys()))
        hint = hints.get(first)
        if isinstance(hint, type) and get_type_hints(hint):
            return hint
    except (TypeError, StopIteration, NameError):
        pass
    return None


def branch_name(path: Any) -> str | None:
    """The router's own name (`__name__`), or None for lambdas, partials and callable
    objects, whose branch is then called "condition" (B-22)."""
    if hasattr(path, "invoke"):
        return getattr(path, "name", None)
    name = getattr(path, "__name__", None)
    return None if name == "<lambda>" else name


class BranchSpec(NamedTuple):
    """A conditional edge as declared: router, path map (None = anywhere) and input schema."""

    path: Any
    ends: dict[Any, str] | None
    input_schema: Any = None

    @classmethod
    def from_path(cls, path: Any, path_map: Any, infer_schema: bool = False) -> BranchSpec:
        ends: dict[Any, str] | None = None
        try:
            if isinstance(path_map, dict):
                ends = dict(path_map)
            elif isinstance(path_map, list):
                ends = {name: name for name in path_map}
            else:
                func = _router_function(path)
                if func is not None:
                    rtn = get_type_hints(func).get("return")
                    if rtn is not None and get_origin(rtn) is Literal:
                        ends = {name: name for name in get_args(rtn)}
        except Exception:
            pass
        schema = _branch_input_schema(path) if infer_schema else None
        return cls(path=path, ends=ends, input_schema=schema)


class CompiledBranch:
    """A branch attached to its source node: reads the node-local view, routes, writes."""

    __slots__ = ("router", "ends", "select", "mapper", "passthrough", "to_channel")

    def __init__(self, spec: BranchSpec, select: Any, mapper: Any) -> None:
        self.router = NodeCallable(spec.path, None)
        self.ends = spec.ends
        self.select = select
        self.mapper = mapper
        self.passthrough = spec.input_schema is None
        self.to_channel = {d: f"branch:to:{d}" for d in (self.ends or {}).values() if type(d) is str}
        # the trigger channel of each named destination

    def router_input(self, task: Any, returned: Any) -> Any:
        select = self.select
        if (self.passthrough and type(returned) is dict and self.mapper is None
                and select is task.run.view_keys and select is not None):
            # the whole state under the node's update: one dict built, no copy of the view
            value = task.local_read_over(returned)
            if value is not None:
                return value
        value = task.local_read(self.select, self.mapper)
        if self.passthrough and isinstance(value, dict) and isinstance(returned, dict):
            value = {**returned, **value}
        return value

    def finish(self, result: Any, writes: list) -> None:
        """Turns the router's result into writes (N-5)."""
        if type(result) is str:
            # one destination by name, the common case: same checks, no lists
            dest = self.ends[result] if self.ends else result
            if type(dest) is str:
                if dest == START:
                    raise ValueError("Branch did not return a valid destination")
                if dest != END:
                    chan = self.to_channel.get(dest)
                    writes.append((chan if chan is not None else f"branch:to:{dest}", None))
                return
            result = [result]
        elif not isinstance(result, (list, tuple)):
            result = [result]
        ends = self.ends
        if ends:
            destinations = [r if isinstance(r, Send) else ends[r] for r in result]
        else:
            destinations = result
        for dest in destinations:
            if dest is None or dest == START:
                raise ValueError("Branch did not return a valid destination")
        for dest in destinations:
            if isinstance(dest, Send) and dest.node == END:
                raise InvalidUpdateError("Cannot send a packet to the END node")
        for dest in destinations:
            if isinstance(dest, Send):
                writes.append((TASKS, dest))
            elif dest != END:
                writes.append((f"branch:to:{dest}", None))

    def route(self, task: Any, returned: Any, writes: list) -> None:
        self.finish(self.router.call(self.router_input(task, returned), task), writes)

    async def aroute(self, task: Any, returned: Any, writes: list) -> None:
        self.finish(await self.router.acall(self.router_input(task, returned), task), writes)
