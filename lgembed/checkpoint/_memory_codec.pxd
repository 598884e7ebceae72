# Augmenting declarations for lgembed/checkpoint/_memory_codec.py in its compiled build
# (lgembed/_engine.py, docs/DESIGN.md §3): the stored-form helpers a put calls for every
# channel and record are C functions, called as such from `_memory_store` (ordinary
# functions for Python callers).

cimport cython

from lgembed.checkpoint.serde cimport thread_pack

cpdef dict _config(thread_id, checkpoint_ns, checkpoint_id)
cpdef bytes _plain_pack(obj)
cpdef bint _kept_as_is(value)
cpdef bint _fast(serde)
cpdef bytes _pack_part(serde, pack, value)
cpdef bytes _array_header(Py_ssize_t count)
@cython.locals(i=Py_ssize_t)
cpdef bint _keys_ok(list keys, Py_ssize_t start)
cpdef bint _all_str(list items)
cpdef _id_code(checkpoint_id)
cpdef _id_text(stored)
cpdef _ts_code(ts)
cpdef _ts_text(stored)
