# Augmenting declarations for lgembed/checkpoint/base.py in its compiled build
# (lgembed/_engine.py, docs/DESIGN.md §3): the metadata merge that every put runs is a C
# function, called as one from the savers' compiled modules (an ordinary function for
# Python callers).

cimport cython

@cython.locals(out=dict)
cpdef dict get_checkpoint_metadata(config, metadata)
