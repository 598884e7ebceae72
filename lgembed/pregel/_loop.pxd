# Augmenting declarations for lgembed/pregel/_loop.py in its compiled build
# (lgembed/_engine.py, docs/DESIGN.md §3): `Run` becomes an extension type, so the step
# loop's `self.<field>` reads and writes are C struct accesses instead of instance-dict
# lookups. Every field stays `object`, so values keep exactly the pure build's
# behaviour (no C ints that overflow, no bools that lose identity). `__dict__` keeps
# instances open to other attributes, as the pure class is; subclasses
# (CheckpointedRun) are ordinary Python classes over it.
#
# The per-step methods are `cpdef`: calls between them are C calls, while a Python
# subclass that overrides one (CheckpointedRun) is still dispatched to, and Python
# callers see ordinary methods.

cimport cython

from lgembed.pregel._node cimport PregelNode
from lgembed.pregel._task cimport Task

cdef class Run:
    cdef dict __dict__
    cdef public object graph, store, config, modes, output_keys, stream_keys
    cdef public object interrupt_before, interrupt_after, parent_ns, ns, nested
    cdef public object parent_task, parent_sink, own_modes, parent_modes, child_sink
    cdef public object _tap, resuming, out, waker, channels, versions, seen
    cdef public object max_version, null_version, live, updated, limit, step, stop
    cdef public object tasks, interrupts, interrupted, pending_handlers, static_interrupt
    cdef public object error, _checkpoint_id, thread_id, run_id, stream_writer
    cdef public object context, _runtime, output, values_emitted, lazy_values
    cdef public object ns_value, parents, nodes, trigger_to_nodes, finishing
    cdef public object view_keys, view_set, view, view_src, unders, unders_src, under_last

    cpdef read_view(self)
    cpdef current_view(self)
    cpdef build_view(self)
    @cython.locals(unders=dict, under=dict, values=dict)
    cpdef dict view_under(self, dict returned, dict view)
    cpdef check_limit(self)
    @cython.locals(node=PregelNode, tasks=list)
    cpdef prepare(self)
    cpdef tick(self)
    cpdef commit(self, Task task)
    cpdef after_tasks(self)
    cpdef after_tick(self)
    @cython.locals(view=dict, channels=dict)
    cpdef apply(self, tasks)
    cpdef next_version(self)
    cpdef end_step(self)
    cpdef emit(self, mode, payload)
    cpdef emit_values(self, payload_fn)
    cpdef _maybe_emit_values(self, updated, tasks)
    cpdef _updates_chunk(self, Task task, cached=*)
