# Augmenting declarations for lgembed/pregel/_loop.py in its compiled build
# (lgembed/_engine.py, DESIGN.md §3): `Run` becomes an extension type, so the step
# loop's `self.<field>` reads and writes are C struct accesses instead of instance-dict
# lookups. Every field stays `object`, so values keep exactly the pure build's
# behaviour (no C ints that overflow, no bools that lose identity). `__dict__` keeps
# instances open to other attributes, as the pure class is; subclasses
# (CheckpointedRun) are ordinary Python classes over it.

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
    cdef public object ns_value, parents
