"""Hardware tools: adapter actions as tools for ToolNode / create_react_agent, under a policy.

Why: an agent acts on the physical world only through these tools, so every call passes
the same gate, in this order:

1. The arguments are validated against the tool's schema (as for any lgembed tool).
2. The `ToolPolicy` checks allow-lists, ranges, payload length and the rate limit. A
   call outside its policy never reaches the driver: the tool returns a ToolMessage with
   `status="error"` whose text names the rule, the value and the limit.
3. A `high` or `critical` call pauses the graph with `interrupt()`. The payload is
   `{"type": "approval", "tool", "args", "risk", "reason", "adapter", "tool_call_id"}`.
   Resuming with `{"approved": True}` runs the call; `{"approved": False, "reason": ...}`
   refuses it with an error ToolMessage. A `critical` call is approved only with a
   non-empty `"reason"` in the resume value.
4. The driver runs; a DriverError becomes an error ToolMessage (the graph goes on and
   the model sees what failed).

Every call (allowed, refused, approved, denied, failed) leaves an audit record in the
graph's store under namespace `("lgembed", "audit")` when the graph has a store, and a
log record on logger `lgembed.edge.audit` (refusals and denials at WARNING).

A hardware tool is an `lgembed.tools.StructuredTool`: its JSON schema, validation and
ToolMessage formatting are those of every other tool. Tools come from a device file's
`[tools.NAME]` tables (`device.tools()`) or from Python with `hardware_tool`.
"""

from __future__ import annotations

import inspect
import json
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import Annotated, Any, Literal

from lgembed.edge.actions import ACTIONS, Action, Param
from lgembed.edge.errors import DeviceFileError, EdgeError, PolicyViolation
from lgembed.edge.policy import ToolPolicy
from lgembed.messages import ToolMessage
from lgembed.tools import StructuredTool

__all__ = ("AUDIT_NAMESPACE", "HardwareTool", "gated_tool", "hardware_tool", "tool_from_table")

AUDIT_NAMESPACE = ("lgembed", "audit")
"""The store namespace of audit records."""

_EMPTY = inspect.Parameter.empty
_CALL_ID = "tool_call_id"


class HardwareTool(StructuredTool):
    """A tool whose calls go through a ToolPolicy (see the module docstring).

    Attributes:
        policy: the ToolPolicy.
        adapters: the names of the adapters the tool may use (one, or several and an
            `adapter` argument choosing among them).
    """

    policy: ToolPolicy
    adapters: tuple[str, ...]

    def _prepare(self, input: Any, tool_call_id: str | None, config: Any) -> tuple[tuple, dict]:
        # the gate needs the call id for its ToolMessages and audit records; a direct
        # invoke with plain arguments (a script, a test) has none and gets plain results
        pos, kw = super()._prepare(input, tool_call_id, config)
        kw[_CALL_ID] = tool_call_id
        return pos, kw


def _audit(tool: str, adapter: str, args: dict, policy: ToolPolicy, outcome: str, detail: str = "", result: Any = None, call_id: str | None = None) -> None:
    import logging

    record: dict[str, Any] = {
        "time": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime()) + f".{int(time.time() * 1e6) % 1_000_000:06d}Z",
        "tool": tool,
        "adapter": adapter,
        "args": _plain(args),
        "risk": policy.risk,
        "outcome": outcome,
    }
    if detail:
        record["detail"] = detail
    if result is not None:
        record["result"] = _plain(result)
    if call_id:
        record["tool_call_id"] = call_id
    store, thread = _store_and_thread()
    if thread is not None:
        record["thread_id"] = thread
    level = logging.WARNING if outcome in ("refused", "denied", "failed") else logging.INFO
    logging.getLogger("lgembed.edge.audit").log(
        level, "%s %s on %s: %s%s", tool, outcome, adapter, json.dumps(record["args"], sort_keys=True), f" ({detail})" if detail else ""
    )
    if store is not None:
        key = f"{time.time_ns():020d}-{uuid.uuid4().hex[:8]}"
        store.put(AUDIT_NAMESPACE, key, record)


def _store_and_thread() -> tuple[Any, Any]:
    from lgembed.config import _current_task, get_config

    if _current_task() is None:
        try:
            config = get_config()
        except RuntimeError:
            return None, None
    else:
        config = get_config()
    conf = config.get("configurable", {})
    thread = conf.get("thread_id")
    try:
        from lgembed.config import get_store

        store = get_store()
    except (RuntimeError, KeyError, AttributeError):
        store = None
    return store, thread


def _plain(v: Any) -> Any:
    if isinstance(v, (bytes, bytearray)):
        return list(v)
    if isinstance(v, Mapping):
        return {str(k): _plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    return v


def _error(text: str, name: str, call_id: str | None) -> Any:
    if call_id is None:
        return f"Error: {text}"
    return ToolMessage(f"Error: {text}", tool_call_id=call_id, name=name, status="error")


def _approval(name: str, adapter: str, args: dict, policy: ToolPolicy, call_id: str | None) -> str | None:
    """Asks for approval with interrupt(); None when approved, else the refusal text."""
    from lgembed.types import interrupt

    reason = policy.reason or f"{policy.risk}-risk hardware action on adapter '{adapter}'"
    payload = {
        "type": "approval",
        "tool": name,
        "args": _plain(args),
        "risk": policy.risk,
        "reason": reason,
        "adapter": adapter,
        "tool_call_id": call_id,
    }
    answer = interrupt(payload)
    if isinstance(answer, bool):
        answer = {"approved": answer}
    if not isinstance(answer, Mapping) or not isinstance(answer.get("approved"), bool):
        return (
            f"Call of tool '{name}' not run: the approval answer must be "
            f"{{'approved': true|false, 'reason': '...'}} (got {answer!r})"
        )
    why = answer.get("reason")
    if not answer["approved"]:
        return f"Call of tool '{name}' denied by the operator" + (f": {why}" if why else "")
    if policy.risk == "critical" and not (isinstance(why, str) and why.strip()):
        return f"Call of tool '{name}' not run: a critical action is approved only with a reason (resume with {{'approved': true, 'reason': '...'}})"
    return None


def gated_tool(
    name: str,
    description: str,
    params: Sequence[Param],
    run: Callable[[Any, dict], Any],
    resolve: Callable[[dict], Any],
    policy: ToolPolicy,
    adapters: tuple[str, ...],
    return_direct: bool = False,
) -> HardwareTool:
    """A HardwareTool whose function takes `params` and gates `run` (policy, approval, audit).

    Used by every hardware tool here and by `lgembed.bridge` for an MCU's functions.
    """

    def gate(**kwargs: Any) -> Any:
        call_id = kwargs.pop(_CALL_ID, None)
        args = {k: v for k, v in kwargs.items()}
        adapter_name = args.get("adapter", adapters[0]) if len(adapters) > 1 else adapters[0]
        approved = False
        try:
            policy.check(name, args)
            policy.check_rate(name)
            if policy.requires_approval:
                refusal = _approval(name, adapter_name, args, policy, call_id)
                if refusal is not None:
                    _audit(name, adapter_name, args, policy, "denied", refusal, call_id=call_id)
                    return _error(refusal, name, call_id)
                approved = True
            policy.take_rate(name)
        except PolicyViolation as e:
            _audit(name, adapter_name, args, policy, "refused", str(e), call_id=call_id)
            return _error(str(e), name, call_id)
        try:
            adapter = resolve(args)
            result = run(adapter, {k: v for k, v in args.items() if k != "adapter"})
        except EdgeError as e:
            _audit(name, adapter_name, args, policy, "failed", str(e), call_id=call_id)
            return _error(str(e), name, call_id)
        _audit(name, adapter_name, args, policy, "approved" if approved else "allowed", result=result, call_id=call_id)
        return json.dumps(_plain(result)) if not isinstance(result, str) else result

    sig_params = [
        inspect.Parameter(p.name, inspect.Parameter.KEYWORD_ONLY, default=p.default, annotation=p.hint) for p in params
    ]
    gate.__signature__ = inspect.Signature(sig_params)  # type: ignore[attr-defined]
    gate.__annotations__ = {p.name: p.hint for p in params}
    gate.__name__ = name
    gate.__doc__ = description
    t = HardwareTool.from_function(gate, name=name, description=description, return_direct=return_direct)
    assert isinstance(t, HardwareTool)
    t.policy = policy
    t.adapters = adapters
    return t


def _action_params(action: Action, policy: ToolPolicy, fixed: Mapping[str, Any]) -> list[Param]:
    params = []
    for p in action.params:
        if p.name in fixed:
            continue
        if p.name == "address" and "address" not in policy.allow:
            continue  # the adapter's own address only, unless the policy allows others
        params.append(p)
    return params


def _adapter_param(adapters: tuple[str, ...]) -> list[Param]:
    if len(adapters) < 2:
        return []
    return [Param("adapter", Annotated[Literal[adapters], "which adapter to use"], _EMPTY)]  # type: ignore[valid-type]


def action_tool(
    name: str,
    registry: Any,
    adapters: Sequence[str],
    action: str,
    policy: ToolPolicy,
    *,
    description: str | None = None,
    fixed: Mapping[str, Any] | None = None,
    options: Mapping[str, Any] | None = None,
    return_direct: bool = False,
) -> HardwareTool:
    """A tool performing `action` on one of `adapters` (all of one kind) in `registry`.

    Args:
        name: the tool's name.
        registry: the EdgeAdapterRegistry the adapters are in.
        adapters: adapter names; with several, the model picks one with an `adapter`
            argument (the allow-list of lines, buses or devices).
        action: an action of the adapters' kind (see `lgembed.edge.actions.ACTIONS`).
        policy: the ToolPolicy.
        description: the text the model sees (default: the action's description).
        fixed: argument values pinned by the tool (removed from the schema).
        options: the action's options (e.g. a UART `line_ending`).

    Raises:
        AdapterNotFoundError: an adapter is not in the registry.
        ValueError: an unknown action, adapters of different kinds, an unknown option.
    """
    adapters = tuple(adapters)
    if not adapters:
        msg = f"hardware tool '{name}': name at least one adapter"
        raise ValueError(msg)
    kinds = {registry.require(a).kind for a in adapters}
    if len(kinds) != 1:
        msg = f"hardware tool '{name}': adapters {list(adapters)} are of different kinds ({', '.join(sorted(kinds))})"
        raise ValueError(msg)
    kind = kinds.pop()
    act = ACTIONS[kind].get(action)
    if act is None:
        msg = f"hardware tool '{name}': {action!r} is not an action of {kind} adapters; allowed: {', '.join(map(repr, ACTIONS[kind]))}"
        raise ValueError(msg)
    fixed = dict(fixed or {})
    known = {p.name for p in act.params}
    for k in fixed:
        if k not in known:
            msg = f"hardware tool '{name}': fixed argument {k!r} is not an argument of {kind} action {action!r}; allowed: {', '.join(sorted(known)) or 'none'}"
            raise ValueError(msg)
    options = dict(options or {})
    for k in options:
        if k not in act.options:
            msg = f"hardware tool '{name}': option {k!r} is not an option of {kind} action {action!r}; allowed: {', '.join(act.options) or 'none'}"
            raise ValueError(msg)
    params = _adapter_param(adapters) + _action_params(act, policy, fixed)

    def resolve(args: dict) -> Any:
        return registry.require(args.get("adapter", adapters[0]) if len(adapters) > 1 else adapters[0])

    def run(adapter: Any, args: dict) -> Any:
        return act.call(adapter, **fixed, **args, **options)

    return gated_tool(name, description or act.description, params, run, resolve, policy, adapters, return_direct)


_TOOL_KEYS = ("adapter", "adapters", "action", "description", "policy", "args", "options", "return_direct")


def tool_from_table(name: str, table: Mapping[str, Any], registry: Any, source: str = "<dict>") -> HardwareTool:
    """A tool from a device file's `[tools.NAME]` table.

    Raises:
        DeviceFileError: an unknown key, a missing adapter or action, an invalid policy.
    """
    key = f"tools.{name}"
    if not isinstance(table, Mapping):
        msg = f"{source}: invalid value for '{key}': {table!r}; allowed: a table"
        raise DeviceFileError(msg, source, key)
    for k in table:
        if k not in _TOOL_KEYS:
            msg = f"{source}: unknown key '{key}.{k}'; allowed keys: {', '.join(_TOOL_KEYS)}"
            raise DeviceFileError(msg, source, f"{key}.{k}")
    adapters = table.get("adapters", table.get("adapter"))
    if isinstance(adapters, str):
        adapters = [adapters]
    if not adapters or not isinstance(adapters, list) or not all(isinstance(a, str) for a in adapters):
        msg = f"{source}: '{key}' needs 'adapter' (an adapter name) or 'adapters' (a list of names) (got {adapters!r})"
        raise DeviceFileError(msg, source, f"{key}.adapter")
    for a in adapters:
        if a not in registry:
            msg = f"{source}: invalid value for '{key}.adapter': {a!r}; allowed: {', '.join(map(repr, registry.names())) or 'no adapters defined'}"
            raise DeviceFileError(msg, source, f"{key}.adapter")
    action = table.get("action")
    if not isinstance(action, str):
        msg = f"{source}: missing setting '{key}.action': a hardware tool needs an action name"
        raise DeviceFileError(msg, source, f"{key}.action")
    policy = ToolPolicy.from_dict(table.get("policy", {}), source, f"{key}.policy")
    try:
        return action_tool(
            name, registry, adapters, action, policy,
            description=table.get("description"), fixed=table.get("args"), options=table.get("options"),
            return_direct=bool(table.get("return_direct", False)),
        )
    except ValueError as e:
        msg = f"{source}: invalid '{key}': {e}"
        raise DeviceFileError(msg, source, key) from e


def hardware_tool(
    adapter: Any,
    *,
    policy: ToolPolicy | None = None,
    name: str | None = None,
    description: str | None = None,
    return_direct: bool = False,
) -> Callable[[Callable[..., Any]], HardwareTool]:
    """Decorator: a Python function acting on an adapter becomes a policy-gated tool.

    The function's first parameter receives the adapter; the others are the tool's
    arguments (their type hints make the JSON schema, as with `lgembed.tools.tool`).

        @hardware_tool(device.adapter("heater"), policy=ToolPolicy("high"))
        def heat(relay, on: bool) -> str:
            '''Switches the heater.'''
            relay.write(on)
            return "on" if on else "off"

    Args:
        adapter: the adapter object the function acts on.
        policy: the ToolPolicy (default: low risk, no limits).
        name, description: default to the function's name and docstring.

    Raises:
        ValueError: a function without parameters, or without a docstring and description.
    """
    policy = policy or ToolPolicy()

    def wrap(func: Callable[..., Any]) -> HardwareTool:
        import typing

        sig = inspect.signature(func)
        ps = list(sig.parameters.values())
        if not ps:
            msg = f"hardware_tool: {func.__name__}() must take the adapter as its first parameter"
            raise ValueError(msg)
        try:
            hints = typing.get_type_hints(func, include_extras=True)
        except Exception:  # noqa: BLE001 - unresolvable hints: those arguments are Any
            hints = {}
        params = [Param(p.name, hints.get(p.name, Any), p.default) for p in ps[1:]]
        desc = description or (inspect.getdoc(func) or "")
        if not desc:
            msg = "Function must have a docstring if description not provided."
            raise ValueError(msg)
        adapter_name = getattr(adapter, "name", str(adapter))
        return gated_tool(
            name or func.__name__, desc, params,
            lambda a, args: func(a, **args), lambda args: adapter, policy, (adapter_name,), return_direct,
        )

    return wrap
