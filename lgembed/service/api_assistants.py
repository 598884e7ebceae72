"""The API's assistant routes: one assistant per served graph, its graph, schemas and subgraphs.

Why this module exists: LangGraph's server stores assistants (configured versions of a
graph); a device serves a fixed set of graphs, so each is one assistant whose id is the
uuid5 of its graph id (`assistant_id_for`), read-only. These routes answer the SDK's
`assistants.*` calls in LangGraph's shapes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from lgembed.service.errors import Invalid, NotFound
from lgembed.service.request import Request, Response, contains, descending, flag, int_value, object_field, page
from lgembed.service.runs import RunManager
from lgembed.service.shapes import assistant_id_for

__all__ = ("AssistantRoutes",)


class AssistantRoutes:
    """The `/assistants` routes.

    Args:
        manager: the run manager that owns the graphs.
    """

    def __init__(self, manager: RunManager) -> None:
        self.manager = manager

    def _assistant(self, graph_id: str) -> dict:
        graph = self.manager.graphs[graph_id]
        name = getattr(graph, "name", None)
        created = self.manager.created_at
        return {
            "assistant_id": assistant_id_for(graph_id),
            "graph_id": graph_id,
            "config": {},
            "context": {},
            "metadata": {"created_by": "system"},
            "name": name if name and name != "LangGraph" else graph_id,
            "created_at": created,
            "updated_at": created,
            "version": 1,
            "description": None,
        }

    def graph_of(self, aid: str) -> str:
        try:
            return self.manager.graph_id_of(aid)
        except Invalid:
            raise NotFound(f"Assistant '{aid}' not found") from None
        except NotFound:
            raise NotFound(f"Assistant '{aid}' not found") from None

    def _assistants(self, payload: dict) -> list[dict]:
        metadata = object_field(payload, "metadata")
        out = []
        for gid in self.manager.graphs:
            a = self._assistant(gid)
            if payload.get("graph_id") and payload["graph_id"] != gid:
                continue
            if payload.get("name") and payload["name"] != a["name"]:
                continue
            if metadata and not contains(a["metadata"], metadata):
                continue
            out.append(a)
        return out

    def search_assistants(self, request: Request) -> Response:
        payload = request.json()
        found = self._assistants(payload)
        sort_by = payload.get("sort_by")
        if sort_by in ("assistant_id", "graph_id", "name", "created_at", "updated_at"):
            found.sort(key=lambda a: a[sort_by], reverse=descending(payload))
        items, headers = page(found, payload)
        return Response.json(items, headers=headers)

    def count_assistants(self, request: Request) -> Response:
        return Response.json(len(self._assistants(request.json())))

    def create_assistant(self, request: Request) -> Response:
        payload = request.json()
        gid = payload.get("graph_id")
        if (
            gid in self.manager.graphs
            and payload.get("if_exists") == "do_nothing"
            and payload.get("assistant_id") in (None, assistant_id_for(gid))
        ):
            return Response.json(self._assistant(gid))
        raise Invalid(
            "lgembed serves one assistant per graph (assistant_id = uuid5 of the graph id, or the graph id "
            "itself); assistants cannot be created or changed through the API"
        )

    def get_assistant(self, request: Request, aid: str) -> Response:
        return Response.json(self._assistant(self.graph_of(aid)))

    def get_graph(self, request: Request, aid: str) -> Response:
        graph = self.manager.graphs[self.graph_of(aid)]
        xray_arg = request.arg("xray")
        xray: Any = False
        if xray_arg:
            if xray_arg in ("true", "True"):
                xray = True
            elif xray_arg not in ("false", "False"):
                xray = int_value(xray_arg, "xray", 1, 1)
        data = graph.get_graph(xray=xray).to_json()
        for node in data.get("nodes", []):
            if isinstance(node.get("data"), dict):
                node["data"].pop("id", None)
        return Response.json(data)

    def _schemas(self, graph_id: str, graph: Any) -> dict:
        def attempt(fn: Callable[[], Any]) -> Any:
            try:
                return fn()
            except Exception:
                return None

        return {
            "graph_id": graph_id,
            "input_schema": attempt(graph.get_input_jsonschema),
            "output_schema": attempt(graph.get_output_jsonschema),
            "state_schema": attempt(lambda: _state_schema(graph)),
            "config_schema": {},
            "context_schema": attempt(graph.get_context_jsonschema),
        }

    def get_schemas(self, request: Request, aid: str) -> Response:
        gid = self.graph_of(aid)
        return Response.json(self._schemas(gid, self.manager.graphs[gid]))

    def get_subgraphs(self, request: Request, aid: str, ns: str | None = None) -> Response:
        gid = self.graph_of(aid)
        graph = self.manager.graphs[gid]
        recurse = flag(request.arg("recurse"))
        found = {name: self._schemas(gid, sub) for name, sub in graph.get_subgraphs(namespace=ns, recurse=recurse)}
        for schema in found.values():
            schema.pop("graph_id", None)
        return Response.json(found)


def _state_schema(graph: Any) -> dict:
    """The state's JSON schema as LangGraph's server sketches it: one property per stream
    channel (lgembed does not derive types here: that would need pydantic)."""
    return {
        "properties": {k: {"default": None, "title": k.replace("_", " ").title()} for k in graph.stream_channels},
        "title": "State",
        "type": "object",
    }
