# Augmenting declarations for lgembed/checkpoint/_id.py in its compiled build
# (lgembed/_engine.py, docs/DESIGN.md §3): a checkpoint id's timestamp and halves are C
# integers (a UUID timestamp needs 61 bits until the year 5236). The module's globals
# stay Python objects (tests replace `_LAST_TIMESTAMP` and `time.time_ns`), except the
# constant UUID epoch offset.

cimport cython

cdef unsigned long long _GREGORIAN_OFFSET

@cython.locals(timestamp=cython.ulonglong, last=cython.ulonglong)
cdef unsigned long long _next_timestamp() except? 0

@cython.locals(timestamp=cython.ulonglong, seq=cython.ulonglong, node=cython.ulonglong, high=cython.ulonglong)
cpdef str uuid6_str(clock_seq)

@cython.locals(micros=cython.longlong, second=cython.longlong, micro=cython.longlong, days=cython.longlong,
               sod=cython.longlong, z=cython.longlong, era=cython.longlong, doe=cython.longlong, yoe=cython.longlong,
               doy=cython.longlong, mp=cython.longlong, day=cython.longlong, month=cython.longlong, year=cython.longlong)
cpdef str now_iso()
