"""Checkpoint persistence: the saver port, its backends and the value serializer.

`lgembed.checkpoint.base` defines `BaseCheckpointSaver` and the checkpoint shapes
(LangGraph's API), `lgembed.checkpoint.memory` the in-process `InMemorySaver`, and
`lgembed.checkpoint.serde` the msgpack serializer with its closed set of types.
Import the submodule you need; this package imports nothing.
"""
