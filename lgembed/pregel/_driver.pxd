# Augmenting declarations for lgembed/pregel/_driver.py in its compiled build
# (lgembed/_engine.py, docs/DESIGN.md §3): the step loop runs a lone task through a C call.

from lgembed.pregel._exec cimport run_alone
