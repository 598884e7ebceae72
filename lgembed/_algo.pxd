# Augmenting declarations for lgembed/_algo.py, which Cython compiles in place
# (docs/DESIGN.md §3, docs/STYLE.md §B).
#
# Typing rules (same as _channels.pxd): only builtin container types the engine
# always passes (dict, list, set) and C booleans are declared, so the compiled module
# behaves exactly like the pure one; channel versions stay `object` (int, float or
# str upstream).

cimport cython

cdef object SKIP_WRITE_KEYS
cdef object _RESERVED_TRIGGERS
cdef object MISSING

# bump_step: bint, set from Python truth values only; grouped/updated/consumed are
# always new builtin containers built here.
@cython.locals(bump_step=cython.bint, consumed=list, grouped=dict, updated=set, vals=list, node_seen=dict,
               gone=list)
cpdef set apply_writes(dict channels, dict versions, dict seen, list tasks, object next_version,
                       dict trigger_to_nodes, set live, list finishing)

# apply_writes' helpers: C calls
@cython.locals(n=Py_ssize_t, names=set)
cdef bint _one_each(object writes) except -1
cdef _warn_unknown(object task, object chan)
cdef bint _store(object ch, object kind, object chan, object val, dict versions, object next_version,
                 set updated, set live) except -1
cdef _update(object ch, object chan, list vals, dict versions, object next_version, set updated, set live)

@cython.locals(found=set)
cpdef list triggered_nodes(set updated, dict trigger_to_nodes)

cpdef bint node_triggered(object triggers, dict channels, dict versions, object node_seen,
                          object null_version) except -1

# a trigger channel's availability: a C call, reading the `value` slot of the kinds
# that have one (`_lg_kind`)
cdef bint _available(object ch) except -1
