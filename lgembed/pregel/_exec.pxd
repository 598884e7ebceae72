# Augmenting declarations for lgembed/pregel/_exec.py in its compiled build
# (lgembed/_engine.py, docs/DESIGN.md §3): the task, its node, the node's callable and its
# branches are typed, so one attempt of a task is a chain of C calls and struct
# accesses. The functions stay callable from Python (cpdef).

cimport cython

from lgembed.pregel._branch cimport CompiledBranch
from lgembed.pregel._call cimport NodeCallable
from lgembed.pregel._loop cimport Run
from lgembed.pregel._node cimport PregelNode
from lgembed.pregel._task cimport Task

# module constants bound once (C globals, not module-dict lookups)
cdef object _set_task, _reset_task, _wall_time

cpdef _begin_attempt(Task task)

@cython.locals(node=PregelNode, proc=NodeCallable, branch=CompiledBranch)
cpdef _node_body(Task task)

@cython.locals(node=PregelNode)
cpdef execute(Task task)

@cython.locals(task=Task, node=PregelNode)
cpdef bint run_alone(Run run, list tasks) except -1
