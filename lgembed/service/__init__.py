"""The service side of lgembed: the local Agent Server API, its runs and their records.

Why this package exists: on a device a graph runs as a long-lived service that an
operator drives from outside the process, with the client LangGraph users already have
(`langgraph-sdk`). The modules here are imported only by `lgembed serve` (and tests),
except `loader` (which `lgembed run` and `lgembed graph` share with it, and the CLI's
error text helper `describe`) and `unit` (`lgembed unit`, `lgembed doctor`):
`import lgembed` and `import lgembed.graph` never load them, so the HTTP server, its
threads and the standard-library modules they need cost nothing to programs that only
use the graph API.

- `lgembed.service.app`: `Service`, the lifecycle of `lgembed serve` under systemd;
  `config` (its file and flags), `notify` (sd_notify), `logs`, `triggers`, `unit`.
- `lgembed.service.loader`: a graph reference (MODULE:ATTR, FILE.py:ATTR) to a compiled graph.
- `lgembed.service.records`: thread and run records, kept in the saver's LMDB environment.
- `lgembed.service.runs`: `RunManager`, which executes runs on a small worker pool,
  drains them on shutdown and resumes the ones a stop or a power cut cut off; beside it
  `run_request` (a run's options, checked), `execution` (a run executing, its events
  fanned out), `shapes` (LangGraph's JSON shapes) and `errors` (refusals with their status).
- `lgembed.service.api`: the route table of the API; the routes per resource in
  `api_assistants`, `api_threads`, `api_runs`; `request` (request checks, the answer).
- `lgembed.service.http`: `ApiServer`, the threaded HTTP/1.1 server in front of them.
"""

__all__ = ()
