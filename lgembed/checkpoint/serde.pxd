# Augmenting declarations for lgembed/checkpoint/serde.py in its compiled build
# (lgembed/_engine.py, docs/DESIGN.md §3): the per-thread Packer lookup every put makes is a
# C function, called as one from the savers' compiled modules.

cpdef thread_pack(bint strict_types=*)
