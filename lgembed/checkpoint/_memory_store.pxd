# Augmenting declarations for lgembed/checkpoint/_memory_store.py in its compiled build
# (lgembed/_engine.py, docs/DESIGN.md §3): `_Store`, an InMemorySaver's tables and the code
# that encodes and stores checkpoints, is a final extension type, so its fields are C
# struct reads and its methods call each other as C functions (Python callers see
# ordinary methods). `_Lane` is an extension type with three dict slots.

cimport cython

from lgembed.checkpoint._memory_codec cimport (
    _all_str,
    _array_header,
    _config,
    _fast,
    _id_code,
    _id_text,
    _kept_as_is,
    _keys_ok,
    _pack_part,
    _plain_pack,
    _ts_code,
    _ts_text,
)
from lgembed.checkpoint.base cimport get_checkpoint_metadata
from lgembed.checkpoint.serde cimport thread_pack

cdef double _FRACTION_SCALE
cdef long long _COUNTER_MAX
# C constants of next_version (the shifts stay Python ints: `1 << 53` overflows a C int)

cpdef bytes _join(bytes record, entry)
@cython.locals(at=Py_ssize_t, end=Py_ssize_t, size=cython.longlong)
cpdef list _parts(bytes value)
@cython.locals(size=cython.longlong)
cpdef bytes _record_of(bytes value)
cpdef _writes_of(bytes value)

cdef class _Lane:
    cdef public dict checkpoints, writes, blobs

@cython.final
cdef class _Store:
    cdef public object lock
    cdef object acquire, release
    cdef public dict threads, name_refs, codes, texts, seen_memo, put_memo
    cdef public list names

    cpdef _name(self, name)
    @cython.locals(refs=dict)
    cpdef list _names_for(self, names)
    cpdef _unname(self, stored)
    cpdef list _names_of(self, stored)
    cpdef _code(self, version)
    cpdef _text(self, code)
    cpdef list _texts_of(self, codes)
    cpdef _blob_key(self, stored_name, code, channel)
    @cython.locals(names=list, codes=list, refs=dict, known=dict)
    cpdef _encode_versions(self, versions)
    @cython.locals(nodes=list, rows=list, memo=dict, refs=dict, known=dict, hit=tuple)
    cpdef _seen_rows(self, serde, pack, seen)
    cpdef dict _decode_seen(self, value)
    cpdef tuple _decode_versions(self, value)
    cpdef list _unpack(self, serde, record, what)
    cpdef _store_value(self, serde, value)
    cpdef _load_value(self, serde, stored)
    cpdef tuple _encode(self, serde, config, checkpoint, metadata, empty, pack, tuple lane_key, lane)
    @cython.locals(known=Py_ssize_t, known_nodes=Py_ssize_t, i=Py_ssize_t, changed=list, new_rows=list)
    cpdef _delta(self, list base, list names, list codes, list nodes, list rows)
    cpdef tuple _decode(self, serde, record, checkpoint_id, lane)
    cpdef tuple _decode_record(self, serde, record, checkpoint_id, lane)
    cpdef tuple _resolve(self, serde, lane, list parts)
    cpdef list _version_keys(self, checkpoint)
    cpdef bytes _pack_writes(self, serde, task_id, path, idxs, channels, values)
    cpdef _Lane _lane_for_put(self, thread_id, checkpoint_ns)
    @cython.locals(blobs=list, empty=list, codes=dict, refs=dict, lane=_Lane, stored=dict)
    cpdef dict put(self, serde, config, checkpoint, metadata, new_versions)
    cpdef dict put_step(self, serde, config, checkpoint, metadata, new_versions, task_writes)
    @cython.locals(channels=list, values=list, idxs=list)
    cpdef put_writes(self, serde, config, writes, task_id, task_path)
    cpdef _put_writes_locked(self, serde, thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, list idxs, list channels, list values)
    cpdef _set_writes(self, lane, thread_id, checkpoint_ns, checkpoint_id, records)
    cpdef _writes_entry(self, _Lane lane, checkpoint_id)
    @cython.locals(scaled=cython.double, whole=cython.ulonglong)
    cpdef str next_version(self, current)
