# Augmenting declarations for lgembed/graph/_branch.py in its compiled build
# (lgembed/_engine.py, DESIGN.md §3): `CompiledBranch` becomes an extension type with
# the fields of its `__slots__`, all `object` (same values and behaviour as the pure build).

cdef class CompiledBranch:
    cdef public object router, ends, select, mapper, passthrough, to_channel
