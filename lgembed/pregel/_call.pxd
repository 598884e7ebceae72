# Augmenting declarations for lgembed/pregel/_call.py in its compiled build
# (lgembed/_engine.py, docs/DESIGN.md §3): `NodeCallable` becomes an extension type with the
# fields of its `__slots__`, all `object` (same values and behaviour as the pure build).

cdef class NodeCallable:
    cdef public object func, name, is_async, is_runnable, accepts, plain

    # a node or router call: a C call from callers that know the type
    cpdef call(self, value, task)
