# Augmenting declarations for lgembed/pregel/_task.py in its compiled build
# (lgembed/_engine.py, docs/DESIGN.md §3): `Task` becomes an extension type with the fields
# of its `__slots__`, all `object` (same values and behaviour as the pure build).

cimport cython


cdef class Task:
    cdef public object name, node, input, path, triggers, writes, order, run
    cdef public object _id, _config, _runtime, node_error, interrupt_idx, resume_values
    cdef public object error, done, interrupts, cached, handled, resume_new
    cdef public object subgraph_counter, attempt, first_attempt_time, returned

    # the node-local read of routers (N-4): a C call from CompiledBranch
    cpdef local_read(self, select, mapper)
    @cython.locals(values=dict, view=dict, updated=dict, vals=list)
    cpdef local_read_over(self, dict returned)
    @cython.locals(updated=dict, vals=list)
    cdef _grouped_writes(self, keys)


cdef _local_value(ch, list vals)
