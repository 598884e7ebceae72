"""Stream chunk shapes and invoke's result: what the caller sees of a run's output (S-2, V-2).

Why a module of its own: the step driver leaves `(namespace, mode, payload)` items in
`run.out`; LangGraph shows them in one of several shapes (one mode or several,
with or without subgraphs, v1 or v2), and invoke folds them into one value.
"""

from __future__ import annotations

from typing import Any

from lgembed._constants import INTERRUPT
from lgembed._schema import is_pydantic_model_class
from lgembed.types import GraphOutput

__all__ = ("InvokeFold", "coerce_output", "formatter", "invoke_result")


class InvokeFold:
    """What invoke/ainvoke return when they stream (V-2): LangGraph's folding of the
    chunks of `stream` (values from the last values chunk of any namespace, interrupts
    from every namespace's updates; v2 from the values parts; other modes: the list)."""

    __slots__ = ("mode", "version", "modes", "latest", "interrupts", "chunks")

    def __init__(self, stream_mode: Any, version: str) -> None:
        self.mode = stream_mode
        self.version = version
        if stream_mode != "values":
            self.modes = stream_mode
        else:
            self.modes = "values" if version == "v2" else ["updates", "values"]
        self.latest: Any = None
        self.interrupts: list = []
        self.chunks: list = []

    def add(self, chunk: Any) -> None:
        if self.mode != "values":
            self.chunks.append(chunk)
        elif self.version == "v2":
            self.latest = chunk["data"]
            self.interrupts.extend(chunk.get("interrupts", ()))
        else:
            mode, payload = chunk if len(chunk) == 2 else chunk[1:]
            if mode == "updates" and isinstance(payload, dict) and payload.get(INTERRUPT) is not None:
                self.interrupts.extend(payload[INTERRUPT])
            elif mode == "values":
                self.latest = payload

    def result(self) -> Any:
        if self.mode != "values":
            return self.chunks
        latest, interrupts = self.latest, self.interrupts
        if self.version == "v2":
            return GraphOutput(value=latest, interrupts=tuple(interrupts))
        if interrupts:
            return {**latest, INTERRUPT: interrupts} if isinstance(latest, dict) else {INTERRUPT: interrupts}
        return latest


def formatter(single: bool, mode: Any, subgraphs: bool, version: str, graph: Any) -> Any:
    """Chunk shape for the requested stream options (S-2)."""
    if version == "v2":

        output_mapper = _v2_mapper(graph.output_channels, graph.output_schema)
        state_mapper = _v2_mapper(graph.stream_channels, graph.state_schema)

        def fmt_v2(item: tuple) -> Any:
            ns, m, payload = item
            if m == "values":
                interrupts: tuple = ()
                if isinstance(payload, dict):
                    if INTERRUPT in payload:
                        payload = dict(payload)
                        interrupts = payload.pop(INTERRUPT)
                    if output_mapper is not None:
                        payload = output_mapper(payload)
                return {"type": m, "ns": ns, "data": payload, "interrupts": interrupts}
            if state_mapper is not None and m in ("checkpoints", "debug"):
                _coerce_checkpoint_values(payload, state_mapper)
            return {"type": m, "ns": ns, "data": payload}

        return fmt_v2
    if subgraphs:
        if single:
            return lambda item: (item[0], item[2])
        return lambda item: item
    if single:
        return lambda item: item[2]
    return lambda item: (item[1], item[2])


def _v2_mapper(keys: Any, schema: Any) -> Any:
    """LangGraph's v2 stream coercion: a pydantic/dataclass schema builds the chunk's
    data (S-2, O-12); None for other schemas and for a root-channel graph."""
    if schema is None or keys == "__root__" or keys == ["__root__"]:
        return None
    from dataclasses import is_dataclass

    if isinstance(schema, type) and (is_dataclass(schema) or is_pydantic_model_class(schema)):
        return lambda values: schema(**values)
    return None


def _coerce_checkpoint_values(payload: Any, mapper: Any) -> None:
    """Coerces the `values` of a checkpoint (or debug checkpoint) payload in place,
    except the first checkpoint of a run (its next holds `__start__`), as LangGraph."""
    if not isinstance(payload, dict):
        return
    if payload.get("type") == "checkpoint" and isinstance(payload.get("payload"), dict):
        payload = payload["payload"]
    if isinstance(payload.get("values"), dict) and "__start__" not in payload.get("next", ()):
        payload["values"] = mapper(payload["values"])




def coerce_output(schema: Any, value: Any) -> Any:
    """A dict result built into the output schema when that is a dataclass or pydantic model."""
    if value is None or not isinstance(value, dict) or schema is None:
        return value
    from dataclasses import is_dataclass

    if is_dataclass(schema) or is_pydantic_model_class(schema):
        return schema(**value)
    return value


def invoke_result(graph: Any, latest: Any, run: Any, version: str) -> Any:
    """What invoke returns: the output values, with the run's interrupts (V-1…V-5)."""
    interrupts = run.interrupts
    if version == "v2":
        value = latest
        if isinstance(value, dict) and INTERRUPT in value:
            value = {k: v for k, v in value.items() if k != INTERRUPT}
        value = coerce_output(graph.output_schema, value)
        return GraphOutput(value=value, interrupts=tuple(interrupts))
    if interrupts:
        if isinstance(latest, dict):
            return {**latest, INTERRUPT: list(interrupts)}
        return {INTERRUPT: list(interrupts)}
    return latest
