# Augmenting declarations for lgembed/_ids.py in its compiled build (lgembed/_engine.py,
# docs/DESIGN.md §3): the digest is a C call from task_id and interrupt_id.

cdef object _EMPTY
cdef str _digest(bytes data)
