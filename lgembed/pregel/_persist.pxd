# Augmenting declarations for lgembed/pregel/_persist.py in its compiled build
# (lgembed/_engine.py, docs/DESIGN.md §3): `CheckpointedRun` becomes an extension type over
# `Run`, so a checkpointed step's `self.<field>` reads and writes are C struct accesses
# and its overrides of Run's per-step methods are `cpdef` (C calls from the engine,
# ordinary methods for Python callers). Every field stays `object`, as in Run.

cimport cython

from lgembed.pregel._loop cimport Run
from lgembed.pregel._task cimport Task

cdef class CheckpointedRun(Run):
    cdef public object saver, durability, pending_writes, deferred_writes, lock
    cdef public object reapplies, first_tick, exit_dirty, addressed, resume_map, null_resume
    cdef public object superseded, checkpoint, checkpoint_metadata, prev_checkpoint_id
    cdef public object loaded_versions, saved_mark, _put_base, exit_parent

    @cython.locals(tasks=list)
    cpdef prepare(self)
    cpdef tick(self)
    cpdef commit(self, Task task)
    cpdef end_step(self)
    cpdef after_tick(self)
    cpdef next_version(self)
    cpdef put_checkpoint(self, source)
    cpdef _put_config(self)
    cpdef _write_config(self)
