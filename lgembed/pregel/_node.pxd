# Augmenting declarations for lgembed/pregel/_node.py in its compiled build
# (lgembed/_engine.py, docs/DESIGN.md §3): `PregelNode` becomes an extension type with the
# fields of its `__slots__`, all `object` (same values and behaviour as the pure build).

cdef class PregelNode:
    cdef public object name, triggers, reads, managed, mapper, proc, output_keys
    cdef public object output_list, root, edge_writes, branches, retry_policy
    cdef public object cache_policy, metadata, tags, defer, ends, hidden, timeout
    cdef public object error_handler, is_error_handler, subgraphs, sorted_triggers, pull_path
    cdef public object pull_task_path, pull_order

    # per-task methods: C calls from callers that know the type (lgembed/pregel/_exec.pxd)
    cpdef read_input(self, channels, step, stop)
    cpdef state_writes(self, value)
    cpdef writes_for(self, value)
