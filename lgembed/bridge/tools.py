"""An MCU's announced functions as hardware tools, gated like every other hardware tool.

Why: a function on a microcontroller acts on the world as surely as a GPIO line does, so
it must pass the same gate: argument validation against a JSON schema, the ToolPolicy
(allow-lists, ranges, rate limit), approval for `high`/`critical` risk through
`interrupt()`, and an audit record. The tools are built by `lgembed.edge.tools.gated_tool`,
the function every hardware tool is built by, so none of that is re-implemented here.

The JSON schema comes from the HELLO's type codes: i -> integer, u -> integer (0 or
more, checked before the call), f -> number, b -> boolean, s -> string, y -> array of
integers 0..255 (sent as msgpack bin), n -> (no argument). The HELLO has no argument
names; a policy table's `args` list names them (default: "value" for a function of one
argument, "arg1", "arg2", ... for more).
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import Annotated, Any

from lgembed.bridge import messages as m
from lgembed.bridge.codec import FunctionSpec, Hello
from lgembed.bridge.errors import LocalProtocolError
from lgembed.edge.actions import Param
from lgembed.edge.policy import ToolPolicy

__all__ = ("POLICY_KEYS", "TOOL_KEYS", "bridge_tools", "tool_params")

TOOL_KEYS = ("description", "args")
"""Keys of a bridge tool's table besides the ToolPolicy's own."""

POLICY_KEYS = ("risk", "allow", "ranges", "rate_limit", "max_length", "reason")
"""ToolPolicy keys a bridge tool's table may hold."""

_HINTS: dict[str, Any] = {
    "i": Annotated[int, "an integer"],
    "u": Annotated[int, "an integer, 0 or more"],
    "f": Annotated[float, "a number"],
    "b": Annotated[bool, "true or false"],
    "s": Annotated[str, "text"],
    "y": Annotated[list[int], "bytes, each 0..255"],
}
# JSON schema of each type code ("n" arguments are not offered: their value is nil)

_RESULT_WORDS = {"i": "an integer", "u": "an integer", "f": "a number", "b": "true or false", "s": "text", "y": "bytes", "n": "nothing", "": "nothing"}


def _arg_names(spec: FunctionSpec, names: Any, where: str) -> list[str]:
    n = len(spec.arg_types)
    if names is None:
        return ["value"] if n == 1 else [f"arg{i + 1}" for i in range(n)]
    if not isinstance(names, (list, tuple)) or len(names) != n or not all(isinstance(x, str) and x.isidentifier() for x in names):
        msg = f"{where}: 'args' must list {n} argument name{'s' if n != 1 else ''} (identifiers) for {spec.name}({spec.arg_types}) (got {names!r})"
        raise ValueError(msg)
    if len(set(names)) != n or "adapter" in names:
        msg = f"{where}: 'args' names must be distinct and not 'adapter' (got {names!r})"
        raise ValueError(msg)
    return list(names)


def tool_params(spec: FunctionSpec, names: list[str]) -> list[Param]:
    """The tool's parameters (name, type hint, no default) for a function's type codes."""
    return [Param(nm, _HINTS[c], inspect.Parameter.empty) for nm, c in zip(names, spec.arg_types) if c != "n"]


def _split(name: str, table: Any, where: str) -> tuple[ToolPolicy, dict[str, Any]]:
    if isinstance(table, ToolPolicy):
        return table, {}
    if table is None:
        return ToolPolicy(), {}
    if not isinstance(table, Mapping):
        msg = f"{where}: a bridge tool's policy must be a ToolPolicy or a table (got {table!r})"
        raise ValueError(msg)
    for k in table:
        if k not in POLICY_KEYS and k not in TOOL_KEYS:
            msg = f"{where}: unknown key {k!r}; allowed keys: {', '.join(POLICY_KEYS + TOOL_KEYS)}"
            raise ValueError(msg)
    policy = ToolPolicy.from_dict({k: v for k, v in table.items() if k in POLICY_KEYS}, where, where)
    return policy, {k: table[k] for k in TOOL_KEYS if k in table}


def bridge_tools(client: Any, hello: Hello, policies: Mapping[str, Any] | None) -> list[Any]:
    """The tools of `client`'s MCU (see `BridgeClient.tools`).

    Raises:
        LocalProtocolError: a policy for a function the MCU does not announce.
        ValueError: an invalid policy table (DeviceFileError when it came from a file).
    """
    from lgembed.edge.tools import gated_tool

    by_name = {f.name: f for f in hello.functions}
    if policies is None:
        wanted: dict[str, Any] = dict.fromkeys(by_name)
    else:
        wanted = dict(policies)
        missing = [n for n in wanted if n not in by_name]
        if missing:
            msg = (
                f"Making tools for bridge '{client.name}': the MCU ({hello.device_id} {hello.fw_version}) does not "
                f"announce {', '.join(map(repr, missing))}; its functions: {', '.join(by_name) or 'none'}"
            )
            raise LocalProtocolError(msg, m.ERR_NO_FUNCTION)
    tools = []
    for name, table in wanted.items():
        spec = by_name[name]
        where = f"bridges.{client.name}.tools.{name}"
        policy, extra = _split(name, table, where)
        names = _arg_names(spec, extra.get("args"), where)
        params = tool_params(spec, names)
        desc = extra.get("description") or _describe(client, hello, spec, names)

        def run(_adapter: Any, args: dict, _spec: FunctionSpec = spec, _names: list[str] = names) -> Any:
            values = []
            for nm, code in zip(_names, _spec.arg_types):
                v = None if code == "n" else args[nm]
                if code == "y" and isinstance(v, list):
                    if not all(isinstance(b, int) and 0 <= b <= 255 for b in v):
                        msg = f"Calling {_spec.name}: argument '{nm}' must be bytes, each 0..255 (got {v!r})"
                        raise LocalProtocolError(msg, m.ERR_ARGS)
                    v = bytes(v)
                values.append(v)
            return client.call(_spec.name, *values)

        tools.append(gated_tool(name, desc, params, run, lambda args: client, policy, (client.name,)))
    return tools


def _describe(client: Any, hello: Hello, spec: FunctionSpec, names: list[str]) -> str:
    args = ", ".join(f"{nm}: {_RESULT_WORDS[c]}" for nm, c in zip(names, spec.arg_types) if c != "n")
    return (
        f"Runs {spec.name}({args}) on microcontroller {hello.device_id} (bridge '{client.name}'); "
        f"returns {_RESULT_WORDS.get(spec.result_type, 'a value')}."
    )
