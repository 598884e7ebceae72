# Augmenting declarations for lgembed/_channels.py, which Cython compiles in place
# (docs/DESIGN.md §3, docs/STYLE.md §B).
#
# What is (and is not) declared here:
# - The channel classes stay plain Python classes: a `cdef class` can subclass only
#   builtins or extension types, not BaseChannel (Generic + ABC), and user subclasses
#   of BaseChannel and of every channel must keep working. Cython still compiles their
#   methods to C; locals of those methods cannot be declared from a .pxd.
# - Module constants and imported names used by the hot methods are C globals
#   (`cdef object`), which skips the module-dict lookup. They are private: the
#   compiled module has no attribute of these names.
# - Private helpers are `cdef` functions: direct C calls from the methods.
# - Nothing is typed with a C or builtin type that could behave differently from the
#   pure build (no C integers that overflow, no `set`/`dict` parameters that would turn
#   an AttributeError into a TypeError, no `type` globals that would bypass
#   `__class__`-based isinstance).
#
# Compiler directives (language_level=3, embedsignature=True, binding=True,
# annotation_typing=False) are passed by setup.py: Cython ignores a `# cython:` header
# in an augmenting .pxd. annotation_typing=False matters: with it on, Cython would
# enforce the pure module's annotations (e.g. reject a tuple where `list` is annotated).

cimport cython

# imported names and constants used by the hot methods
cdef object OVERWRITE
cdef object MISSING
cdef object Overwrite
cdef object EmptyChannelError
cdef object InvalidUpdateError
cdef object BARRIER_VALUE
cdef object CONCURRENT_UPDATE
cdef object DOUBLE_OVERWRITE
cdef object GUARD_UPDATE
cdef object _PLAIN
cdef tuple _LIST_LIKE, _SET_LIKE, _DICT_LIKE  # always tuple literals

# C-7 initial value (construction time)
cdef tuple _required_forms()
cdef object _strip_extras(object t)
cdef object _initial_value(object typ)

# C-7 Overwrite detection, once per reducer write
cdef object _overwritten(object value)

# B-4 reducer equality (bint: the pure function returns a bool, so no change)
cdef bint _operators_equal(object a, object b) except -1

# C-6 Topic writes; `items` is always a new list, so typing it only selects the
# list fast paths for append/extend
@cython.locals(items=list)
cdef list _flatten(object values)
