"""Long-term memory shared across threads: LangGraph's `langgraph.store` API.

`lgembed.store.base` holds the `BaseStore` interface, `Item` and the batch
operations; `lgembed.store.memory` the dict-backed `InMemoryStore`. Import those
modules directly; this package imports nothing so that `import lgembed.store` stays free.
"""

__all__ = ()
