# Augmenting declarations for lgembed/pregel/_branch.py in its compiled build
# (lgembed/_engine.py, docs/DESIGN.md §3): `CompiledBranch` becomes an extension type with
# the fields of its `__slots__`, all `object` except the router (always a
# NodeCallable), so routing is a chain of C calls.

from lgembed.pregel._call cimport NodeCallable
from lgembed.pregel._task cimport Task

cdef class CompiledBranch:
    cdef public NodeCallable router
    cdef public object ends, select, mapper, passthrough, to_channel

    cpdef router_input(self, Task task, returned)
    cpdef finish(self, result, writes)
    cpdef route(self, Task task, returned, writes)
