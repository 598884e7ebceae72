"""get_graph() drawing: which nodes and edges appear, and the Mermaid text.

Every expected string was printed by LangGraph 1.2.22 (`app.get_graph().draw_mermaid()`,
langchain-core 1.8.3) for the equivalent StateGraph: each case below was built there
with `add_node(name, fn, defer=..., metadata=..., destinations=<ends>)`,
`add_edge(start, end)`, `add_edge([starts], end)` and
`add_conditional_edges(source, <function named like the branch>, <path map>)`, and
compiled with the case's `compile` options. A random differential run (1,900 graphs)
against LangGraph agreed as well; these cases pin the behaviours it exercised.
Statements: B-14 (ends only affect drawing), B-21 (joins), B-22 (path maps), O-11 (defer).
"""

import re
import subprocess
import sys
import types

import pytest

from lgembed.constants import END, START
from lgembed.graph._draw import CurveStyle, Edge, Graph, Node, NodeStyles, draw_graph
from lgembed.graph._mermaid import _yaml_dump

S, E = START, END


def make_spec(case):
    """A builder-like spec (see draw_graph) from a case description."""
    nodes = {}
    for name, opts in case["nodes"]:
        nodes[name] = types.SimpleNamespace(
            metadata=opts.get("metadata"), ends=opts.get("ends", ()), defer=opts.get("defer", False)
        )
    branches = {}
    for source, branch_name, path_map in case.get("branches", []):
        if isinstance(path_map, dict):
            ends = dict(path_map)
        elif isinstance(path_map, list):
            ends = {x: x for x in path_map}
        else:
            ends = None
        branches.setdefault(source, {})[branch_name] = types.SimpleNamespace(ends=ends)
    return types.SimpleNamespace(
        nodes=nodes,
        edges=set(case.get("edges", [])),
        waiting_edges=set(case.get("waiting_edges", [])),
        branches=branches,
    )


def draw(case):
    options = case.get("compile", {})
    return draw_graph(
        make_spec(case),
        interrupt_before=options.get("interrupt_before", ()),
        interrupt_after=options.get("interrupt_after", ()),
    )


# (name, options) nodes; edges; waiting_edges; branches (source, branch name, path map)
CASES = {
    "linear": dict(nodes=[("a", {}), ("b", {})], edges=[(S, "a"), ("a", "b"), ("b", E)]),
    "cond_dict": dict(
        nodes=[("a", {}), ("b", {}), ("c", {})],
        edges=[(S, "a"), ("b", E), ("c", E)],
        branches=[("a", "route", {"go b": "b", "go c": "c", "stop": E})],
    ),
    "cond_no_map": dict(
        nodes=[("a", {}), ("b", {}), ("c", {})], edges=[(S, "a"), ("b", E)], branches=[("a", "route", None)]
    ),
    "cond_no_map_from_start": dict(nodes=[("a", {}), ("b", {})], branches=[(S, "route", None)]),
    "cond_list_map": dict(nodes=[("a", {}), ("b", {})], edges=[(S, "a")], branches=[("a", "route", ["b", E])]),
    "cond_two_labels_same_target": dict(
        nodes=[("a", {}), ("b", {})], edges=[(S, "a")], branches=[("a", "route", {"x": "b", "y": "b", "z": E})]
    ),
    "cond_int_labels": dict(nodes=[("a", {}), ("b", {})], edges=[(S, "a")], branches=[("a", "route", {1: "b", 2: E})]),
    "cond_entry_point": dict(
        nodes=[("a", {}), ("b", {})], edges=[("a", E)], branches=[(S, "route", {"one": "a", "two": "b"})]
    ),
    "command_ends": dict(nodes=[("a", {"ends": ("b", "c")}), ("b", {}), ("c", {})], edges=[(S, "a")]),
    "command_ends_with_end": dict(nodes=[("a", {"ends": ("b", E)}), ("b", {})], edges=[(S, "a")]),
    "command_ends_labelled": dict(
        nodes=[("a", {"ends": {"b": "to b", "c": "to c"}}), ("b", {}), ("c", {})], edges=[(S, "a")]
    ),
    "join": dict(
        nodes=[("a", {}), ("b", {}), ("c", {})],
        edges=[(S, "a"), (S, "b"), ("c", E)],
        waiting_edges=[(("a", "b"), "c")],
    ),
    "join_partial_chain": dict(
        nodes=[("a", {}), ("b", {}), ("c", {})], edges=[(S, "a"), ("a", "b")], waiting_edges=[(("a", "b"), "c")]
    ),
    "join_to_end": dict(
        nodes=[("a", {}), ("b", {}), ("c", {})], edges=[(S, "a"), ("a", "b"), ("b", "c")], waiting_edges=[(("a", "c"), E)]
    ),
    "join_deferred": dict(
        nodes=[("a", {}), ("b", {}), ("c", {"defer": True})],
        edges=[(S, "a"), (S, "b"), ("c", E)],
        waiting_edges=[(("a", "b"), "c")],
    ),
    "defer": dict(
        nodes=[("x", {}), ("y1", {}), ("y2", {}), ("z", {"defer": True})],
        edges=[(S, "x"), (S, "y1"), ("y1", "y2"), ("x", "z"), ("y2", "z"), ("z", E)],
    ),
    "loop_2": dict(nodes=[("a", {}), ("b", {})], edges=[(S, "a"), ("a", "b"), ("b", "a")]),
    "loop_3": dict(nodes=[("a", {}), ("b", {}), ("c", {})], edges=[(S, "a"), ("a", "b"), ("b", "c"), ("c", "a")]),
    "loop_4": dict(
        nodes=[("a", {}), ("b", {}), ("c", {}), ("d", {})],
        edges=[(S, "a"), ("a", "b"), ("b", "c"), ("c", "d"), ("d", "a")],
    ),
    "self_loop": dict(nodes=[("a", {})], edges=[(S, "a"), ("a", "a")]),
    "two_self_loops_no_end": dict(nodes=[("a", {}), ("b", {})], edges=[(S, "a"), (S, "b"), ("a", "a"), ("b", "b")]),
    "cond_self_loop": dict(nodes=[("a", {})], edges=[(S, "a")], branches=[("a", "route", {"again": "a", "done": E})]),
    "cond_loop": dict(
        nodes=[("a", {}), ("b", {}), ("c", {})],
        edges=[(S, "a"), ("b", "c")],
        branches=[("a", "r1", {"x": "b"}), ("c", "r2", {"back": "a", "out": E})],
    ),
    "explicit_end_not_drawn": dict(nodes=[("a", {}), ("b", {})], edges=[(S, "a"), ("a", "b"), ("a", E), ("b", E)]),
    "plain_and_cond_same_target": dict(
        nodes=[("a", {}), ("b", {})], edges=[(S, "a"), ("a", "b")], branches=[("a", "route", {"lbl": "b", "e": E})]
    ),
    "fan_in_without_join": dict(
        nodes=[("a", {}), ("b", {}), ("c", {})], edges=[(S, "a"), (S, "b"), ("a", "c"), ("b", "c")]
    ),
    "metadata_and_interrupts": dict(
        nodes=[("a", {"metadata": {"k": "v", "n": 3, "l": [1, 2], "d": {"x": 1}, "s": "a|b[c] #1"}}), ("b", {})],
        edges=[(S, "a"), ("a", "b")],
        compile=dict(interrupt_before=["b"], interrupt_after=["a", "b"]),
    ),
    "odd_names_and_long_label": dict(
        nodes=[("my node", {}), ("_x_", {}), ("a-b.c", {})],
        edges=[(S, "my node")],
        branches=[("my node", "route", {"one two three four five six seven eight nine ten eleven": "_x_", "q": "a-b.c"})],
    ),
    "two_branches_same_source": dict(
        nodes=[("a", {}), ("b", {})],
        edges=[(S, "a")],
        branches=[("a", "r1", {"x": "b"}), ("a", "r2", {"y": "b", "z": E})],
    ),
}
RAISES = {
    "none_and_str_label": dict(
        nodes=[("a", {"ends": ("b",)}), ("b", {})], edges=[(S, "a")], branches=[("a", "route", {"x": "b", "y": E})]
    ),
}


# what LangGraph 1.2.22 printed for each case
EXPECTED = {
    'linear': (
        '---\n'
        'config:\n'
        '  flowchart:\n'
        '    curve: linear\n'
        '---\n'
        'graph TD;\n'
        '\t__start__([<p>__start__</p>]):::first\n'
        '\ta(a)\n'
        '\tb(b)\n'
        '\t__end__([<p>__end__</p>]):::last\n'
        '\t__start__ --> a;\n'
        '\ta --> b;\n'
        '\tb --> __end__;\n'
        '\tclassDef default fill:#f2f0ff,line-height:1.2\n'
        '\tclassDef first fill-opacity:0\n'
        '\tclassDef last fill:#bfb6fc\n'
    ),
    'cond_dict': (
        '---\n'
        'config:\n'
        '  flowchart:\n'
        '    curve: linear\n'
        '---\n'
        'graph TD;\n'
        '\t__start__([<p>__start__</p>]):::first\n'
        '\ta(a)\n'
        '\tb(b)\n'
        '\tc(c)\n'
        '\t__end__([<p>__end__</p>]):::last\n'
        '\t__start__ --> a;\n'
        '\ta -. &nbsp;stop&nbsp; .-> __end__;\n'
        '\ta -. &nbsp;go b&nbsp; .-> b;\n'
        '\ta -. &nbsp;go c&nbsp; .-> c;\n'
        '\tb --> __end__;\n'
        '\tc --> __end__;\n'
        '\tclassDef default fill:#f2f0ff,line-height:1.2\n'
        '\tclassDef first fill-opacity:0\n'
        '\tclassDef last fill:#bfb6fc\n'
    ),
    'cond_no_map': (
        '---\n'
        'config:\n'
        '  flowchart:\n'
        '    curve: linear\n'
        '---\n'
        'graph TD;\n'
        '\t__start__(<p>__start__</p>)\n'
        '\ta(a)\n'
        '\tb(b)\n'
        '\tc(c)\n'
        '\t__end__(<p>__end__</p>)\n'
        '\t__start__ --> a;\n'
        '\ta --> __end__;\n'
        '\tclassDef default fill:#f2f0ff,line-height:1.2\n'
        '\tclassDef first fill-opacity:0\n'
        '\tclassDef last fill:#bfb6fc\n'
    ),
    'cond_no_map_from_start': (
        '---\n'
        'config:\n'
        '  flowchart:\n'
        '    curve: linear\n'
        '---\n'
        'graph TD;\n'
        '\t__start__(<p>__start__</p>)\n'
        '\ta(a)\n'
        '\tb(b)\n'
        '\t__end__(<p>__end__</p>)\n'
        '\t__start__ -.-> __end__;\n'
        '\tclassDef default fill:#f2f0ff,line-height:1.2\n'
        '\tclassDef first fill-opacity:0\n'
        '\tclassDef last fill:#bfb6fc\n'
    ),
    'cond_list_map': (
        '---\n'
        'config:\n'
        '  flowchart:\n'
        '    curve: linear\n'
        '---\n'
        'graph TD;\n'
        '\t__start__([<p>__start__</p>]):::first\n'
        '\ta(a)\n'
        '\tb(b)\n'
        '\t__end__([<p>__end__</p>]):::last\n'
        '\t__start__ --> a;\n'
        '\ta -.-> __end__;\n'
        '\ta -.-> b;\n'
        '\tb --> __end__;\n'
        '\tclassDef default fill:#f2f0ff,line-height:1.2\n'
        '\tclassDef first fill-opacity:0\n'
        '\tclassDef last fill:#bfb6fc\n'
    ),
    'cond_two_labels_same_target': (
        '---\n'
        'config:\n'
        '  flowchart:\n'
        '    curve: linear\n'
        '---\n'
        'graph TD;\n'
        '\t__start__([<p>__start__</p>]):::first\n'
        '\ta(a)\n'
        '\tb(b)\n'
        '\t__end__([<p>__end__</p>]):::last\n'
        '\t__start__ --> a;\n'
        '\ta -. &nbsp;z&nbsp; .-> __end__;\n'
        '\ta -. &nbsp;x&nbsp; .-> b;\n'
        '\tb --> __end__;\n'
        '\tclassDef default fill:#f2f0ff,line-height:1.2\n'
        '\tclassDef first fill-opacity:0\n'
        '\tclassDef last fill:#bfb6fc\n'
    ),
    'cond_int_labels': (
        '---\n'
        'config:\n'
        '  flowchart:\n'
        '    curve: linear\n'
        '---\n'
        'graph TD;\n'
        '\t__start__([<p>__start__</p>]):::first\n'
        '\ta(a)\n'
        '\tb(b)\n'
        '\t__end__([<p>__end__</p>]):::last\n'
        '\t__start__ --> a;\n'
        '\ta -. &nbsp;2&nbsp; .-> __end__;\n'
        '\ta -. &nbsp;1&nbsp; .-> b;\n'
        '\tb --> __end__;\n'
        '\tclassDef default fill:#f2f0ff,line-height:1.2\n'
        '\tclassDef first fill-opacity:0\n'
        '\tclassDef last fill:#bfb6fc\n'
    ),
    'cond_entry_point': (
        '---\n'
        'config:\n'
        '  flowchart:\n'
        '    curve: linear\n'
        '---\n'
        'graph TD;\n'
        '\t__start__([<p>__start__</p>]):::first\n'
        '\ta(a)\n'
        '\tb(b)\n'
        '\t__end__([<p>__end__</p>]):::last\n'
        '\t__start__ -. &nbsp;one&nbsp; .-> a;\n'
        '\t__start__ -. &nbsp;two&nbsp; .-> b;\n'
        '\ta --> __end__;\n'
        '\tb --> __end__;\n'
        '\tclassDef default fill:#f2f0ff,line-height:1.2\n'
        '\tclassDef first fill-opacity:0\n'
        '\tclassDef last fill:#bfb6fc\n'
    ),
    'command_ends': (
        '---\n'
        'config:\n'
        '  flowchart:\n'
        '    curve: linear\n'
        '---\n'
        'graph TD;\n'
        '\t__start__([<p>__start__</p>]):::first\n'
        '\ta(a)\n'
        '\tb(b)\n'
        '\tc(c)\n'
        '\t__end__([<p>__end__</p>]):::last\n'
        '\t__start__ --> a;\n'
        '\ta -.-> b;\n'
        '\ta -.-> c;\n'
        '\tb --> __end__;\n'
        '\tc --> __end__;\n'
        '\tclassDef default fill:#f2f0ff,line-height:1.2\n'
        '\tclassDef first fill-opacity:0\n'
        '\tclassDef last fill:#bfb6fc\n'
    ),
    'command_ends_with_end': (
        '---\n'
        'config:\n'
        '  flowchart:\n'
        '    curve: linear\n'
        '---\n'
        'graph TD;\n'
        '\t__start__([<p>__start__</p>]):::first\n'
        '\ta(a)\n'
        '\tb(b)\n'
        '\t__end__([<p>__end__</p>]):::last\n'
        '\t__start__ --> a;\n'
        '\ta -.-> __end__;\n'
        '\ta -.-> b;\n'
        '\tb --> __end__;\n'
        '\tclassDef default fill:#f2f0ff,line-height:1.2\n'
        '\tclassDef first fill-opacity:0\n'
        '\tclassDef last fill:#bfb6fc\n'
    ),
    'command_ends_labelled': (
        '---\n'
        'config:\n'
        '  flowchart:\n'
        '    curve: linear\n'
        '---\n'
        'graph TD;\n'
        '\t__start__([<p>__start__</p>]):::first\n'
        '\ta(a)\n'
        '\tb(b)\n'
        '\tc(c)\n'
        '\t__end__([<p>__end__</p>]):::last\n'
        '\t__start__ --> a;\n'
        '\ta -. &nbsp;to b&nbsp; .-> b;\n'
        '\ta -. &nbsp;to c&nbsp; .-> c;\n'
        '\tb --> __end__;\n'
        '\tc --> __end__;\n'
        '\tclassDef default fill:#f2f0ff,line-height:1.2\n'
        '\tclassDef first fill-opacity:0\n'
        '\tclassDef last fill:#bfb6fc\n'
    ),
    'join': (
        '---\n'
        'config:\n'
        '  flowchart:\n'
        '    curve: linear\n'
        '---\n'
        'graph TD;\n'
        '\t__start__([<p>__start__</p>]):::first\n'
        '\ta(a)\n'
        '\tb(b)\n'
        '\tc(c)\n'
        '\t__end__([<p>__end__</p>]):::last\n'
        '\t__start__ --> a;\n'
        '\t__start__ --> b;\n'
        '\ta --> c;\n'
        '\tb --> c;\n'
        '\tc --> __end__;\n'
        '\tclassDef default fill:#f2f0ff,line-height:1.2\n'
        '\tclassDef first fill-opacity:0\n'
        '\tclassDef last fill:#bfb6fc\n'
    ),
    'join_partial_chain': (
        '---\n'
        'config:\n'
        '  flowchart:\n'
        '    curve: linear\n'
        '---\n'
        'graph TD;\n'
        '\t__start__([<p>__start__</p>]):::first\n'
        '\ta(a)\n'
        '\tb(b)\n'
        '\tc(c)\n'
        '\t__end__([<p>__end__</p>]):::last\n'
        '\t__start__ --> a;\n'
        '\ta --> b;\n'
        '\ta --> c;\n'
        '\tb --> c;\n'
        '\tc --> __end__;\n'
        '\tclassDef default fill:#f2f0ff,line-height:1.2\n'
        '\tclassDef first fill-opacity:0\n'
        '\tclassDef last fill:#bfb6fc\n'
    ),
    'join_to_end': (
        '---\n'
        'config:\n'
        '  flowchart:\n'
        '    curve: linear\n'
        '---\n'
        'graph TD;\n'
        '\t__start__([<p>__start__</p>]):::first\n'
        '\ta(a)\n'
        '\tb(b)\n'
        '\tc(c)\n'
        '\t__end__([<p>__end__</p>]):::last\n'
        '\t__start__ --> a;\n'
        '\ta --> b;\n'
        '\tb --> c;\n'
        '\tc --> __end__;\n'
        '\tclassDef default fill:#f2f0ff,line-height:1.2\n'
        '\tclassDef first fill-opacity:0\n'
        '\tclassDef last fill:#bfb6fc\n'
    ),
    'join_deferred': (
        '---\n'
        'config:\n'
        '  flowchart:\n'
        '    curve: linear\n'
        '---\n'
        'graph TD;\n'
        '\t__start__([<p>__start__</p>]):::first\n'
        '\ta(a)\n'
        '\tb(b)\n'
        '\tc(c<hr/><small><em>defer = True</em></small>)\n'
        '\t__end__([<p>__end__</p>]):::last\n'
        '\t__start__ --> a;\n'
        '\t__start__ --> b;\n'
        '\ta --> c;\n'
        '\tb --> c;\n'
        '\tc --> __end__;\n'
        '\tclassDef default fill:#f2f0ff,line-height:1.2\n'
        '\tclassDef first fill-opacity:0\n'
        '\tclassDef last fill:#bfb6fc\n'
    ),
    'defer': (
        '---\n'
        'config:\n'
        '  flowchart:\n'
        '    curve: linear\n'
        '---\n'
        'graph TD;\n'
        '\t__start__([<p>__start__</p>]):::first\n'
        '\tx(x)\n'
        '\ty1(y1)\n'
        '\ty2(y2)\n'
        '\tz(z<hr/><small><em>defer = True</em></small>)\n'
        '\t__end__([<p>__end__</p>]):::last\n'
        '\t__start__ --> x;\n'
        '\t__start__ --> y1;\n'
        '\tx --> z;\n'
        '\ty1 --> y2;\n'
        '\ty2 --> z;\n'
        '\tz --> __end__;\n'
        '\tclassDef default fill:#f2f0ff,line-height:1.2\n'
        '\tclassDef first fill-opacity:0\n'
        '\tclassDef last fill:#bfb6fc\n'
    ),
    'loop_2': (
        '---\n'
        'config:\n'
        '  flowchart:\n'
        '    curve: linear\n'
        '---\n'
        'graph TD;\n'
        '\t__start__([<p>__start__</p>]):::first\n'
        '\ta(a)\n'
        '\tb(b)\n'
        '\t__end__([<p>__end__</p>]):::last\n'
        '\t__start__ --> a;\n'
        '\ta --> b;\n'
        '\tb --> a;\n'
        '\tb -.-> __end__;\n'
        '\tclassDef default fill:#f2f0ff,line-height:1.2\n'
        '\tclassDef first fill-opacity:0\n'
        '\tclassDef last fill:#bfb6fc\n'
    ),
    'loop_3': (
        '---\n'
        'config:\n'
        '  flowchart:\n'
        '    curve: linear\n'
        '---\n'
        'graph TD;\n'
        '\t__start__([<p>__start__</p>]):::first\n'
        '\ta(a)\n'
        '\tb(b)\n'
        '\tc(c)\n'
        '\t__end__([<p>__end__</p>]):::last\n'
        '\t__start__ --> a;\n'
        '\ta --> b;\n'
        '\tb --> c;\n'
        '\tc --> a;\n'
        '\ta -.-> __end__;\n'
        '\tclassDef default fill:#f2f0ff,line-height:1.2\n'
        '\tclassDef first fill-opacity:0\n'
        '\tclassDef last fill:#bfb6fc\n'
    ),
    'loop_4': (
        '---\n'
        'config:\n'
        '  flowchart:\n'
        '    curve: linear\n'
        '---\n'
        'graph TD;\n'
        '\t__start__([<p>__start__</p>]):::first\n'
        '\ta(a)\n'
        '\tb(b)\n'
        '\tc(c)\n'
        '\td(d)\n'
        '\t__end__([<p>__end__</p>]):::last\n'
        '\t__start__ --> a;\n'
        '\ta --> b;\n'
        '\tb --> c;\n'
        '\tc --> d;\n'
        '\td --> a;\n'
        '\tb -.-> __end__;\n'
        '\tclassDef default fill:#f2f0ff,line-height:1.2\n'
        '\tclassDef first fill-opacity:0\n'
        '\tclassDef last fill:#bfb6fc\n'
    ),
    'self_loop': (
        '---\n'
        'config:\n'
        '  flowchart:\n'
        '    curve: linear\n'
        '---\n'
        'graph TD;\n'
        '\t__start__([<p>__start__</p>]):::first\n'
        '\ta(a)\n'
        '\t__end__([<p>__end__</p>]):::last\n'
        '\t__start__ --> a;\n'
        '\ta -.-> __end__;\n'
        '\ta --> a;\n'
        '\tclassDef default fill:#f2f0ff,line-height:1.2\n'
        '\tclassDef first fill-opacity:0\n'
        '\tclassDef last fill:#bfb6fc\n'
    ),
    'two_self_loops_no_end': (
        '---\n'
        'config:\n'
        '  flowchart:\n'
        '    curve: linear\n'
        '---\n'
        'graph TD;\n'
        '\t__start__([<p>__start__</p>]):::first\n'
        '\ta(a)\n'
        '\tb(b)\n'
        '\t__start__ --> a;\n'
        '\t__start__ --> b;\n'
        '\ta --> a;\n'
        '\tb --> b;\n'
        '\tclassDef default fill:#f2f0ff,line-height:1.2\n'
        '\tclassDef first fill-opacity:0\n'
        '\tclassDef last fill:#bfb6fc\n'
    ),
    'cond_self_loop': (
        '---\n'
        'config:\n'
        '  flowchart:\n'
        '    curve: linear\n'
        '---\n'
        'graph TD;\n'
        '\t__start__([<p>__start__</p>]):::first\n'
        '\ta(a)\n'
        '\t__end__([<p>__end__</p>]):::last\n'
        '\t__start__ --> a;\n'
        '\ta -. &nbsp;done&nbsp; .-> __end__;\n'
        '\ta -. &nbsp;again&nbsp; .-> a;\n'
        '\tclassDef default fill:#f2f0ff,line-height:1.2\n'
        '\tclassDef first fill-opacity:0\n'
        '\tclassDef last fill:#bfb6fc\n'
    ),
    'cond_loop': (
        '---\n'
        'config:\n'
        '  flowchart:\n'
        '    curve: linear\n'
        '---\n'
        'graph TD;\n'
        '\t__start__([<p>__start__</p>]):::first\n'
        '\ta(a)\n'
        '\tb(b)\n'
        '\tc(c)\n'
        '\t__end__([<p>__end__</p>]):::last\n'
        '\t__start__ --> a;\n'
        '\ta -. &nbsp;x&nbsp; .-> b;\n'
        '\tb --> c;\n'
        '\tc -. &nbsp;out&nbsp; .-> __end__;\n'
        '\tc -. &nbsp;back&nbsp; .-> a;\n'
        '\tclassDef default fill:#f2f0ff,line-height:1.2\n'
        '\tclassDef first fill-opacity:0\n'
        '\tclassDef last fill:#bfb6fc\n'
    ),
    'explicit_end_not_drawn': (
        '---\n'
        'config:\n'
        '  flowchart:\n'
        '    curve: linear\n'
        '---\n'
        'graph TD;\n'
        '\t__start__([<p>__start__</p>]):::first\n'
        '\ta(a)\n'
        '\tb(b)\n'
        '\t__end__([<p>__end__</p>]):::last\n'
        '\t__start__ --> a;\n'
        '\ta --> b;\n'
        '\tb --> __end__;\n'
        '\tclassDef default fill:#f2f0ff,line-height:1.2\n'
        '\tclassDef first fill-opacity:0\n'
        '\tclassDef last fill:#bfb6fc\n'
    ),
    'plain_and_cond_same_target': (
        '---\n'
        'config:\n'
        '  flowchart:\n'
        '    curve: linear\n'
        '---\n'
        'graph TD;\n'
        '\t__start__([<p>__start__</p>]):::first\n'
        '\ta(a)\n'
        '\tb(b)\n'
        '\t__end__([<p>__end__</p>]):::last\n'
        '\t__start__ --> a;\n'
        '\ta -. &nbsp;e&nbsp; .-> __end__;\n'
        '\ta -. &nbsp;lbl&nbsp; .-> b;\n'
        '\tb --> __end__;\n'
        '\tclassDef default fill:#f2f0ff,line-height:1.2\n'
        '\tclassDef first fill-opacity:0\n'
        '\tclassDef last fill:#bfb6fc\n'
    ),
    'fan_in_without_join': (
        '---\n'
        'config:\n'
        '  flowchart:\n'
        '    curve: linear\n'
        '---\n'
        'graph TD;\n'
        '\t__start__([<p>__start__</p>]):::first\n'
        '\ta(a)\n'
        '\tb(b)\n'
        '\tc(c)\n'
        '\t__end__([<p>__end__</p>]):::last\n'
        '\t__start__ --> a;\n'
        '\t__start__ --> b;\n'
        '\ta --> c;\n'
        '\tb --> c;\n'
        '\tc --> __end__;\n'
        '\tclassDef default fill:#f2f0ff,line-height:1.2\n'
        '\tclassDef first fill-opacity:0\n'
        '\tclassDef last fill:#bfb6fc\n'
    ),
    'metadata_and_interrupts': (
        '---\n'
        'config:\n'
        '  flowchart:\n'
        '    curve: linear\n'
        '---\n'
        'graph TD;\n'
        '\t__start__([<p>__start__</p>]):::first\n'
        '\ta(a<hr/><small><em>k = v\n'
        'n = 3\n'
        'l = 1, 2\n'
        's = a#124;b#91;c#93; #35;1\n'
        '__interrupt = after</em></small>)\n'
        '\tb(b<hr/><small><em>__interrupt = before,after</em></small>)\n'
        '\t__end__([<p>__end__</p>]):::last\n'
        '\t__start__ --> a;\n'
        '\ta --> b;\n'
        '\tb --> __end__;\n'
        '\tclassDef default fill:#f2f0ff,line-height:1.2\n'
        '\tclassDef first fill-opacity:0\n'
        '\tclassDef last fill:#bfb6fc\n'
    ),
    'odd_names_and_long_label': (
        '---\n'
        'config:\n'
        '  flowchart:\n'
        '    curve: linear\n'
        '---\n'
        'graph TD;\n'
        '\t__start__([<p>__start__</p>]):::first\n'
        '\tmy\\20node(my node)\n'
        '\t_x_(<p>_x_</p>)\n'
        '\ta-b\\2ec(a-b.c)\n'
        '\t__end__([<p>__end__</p>]):::last\n'
        '\t__start__ --> my\\20node;\n'
        '\tmy\\20node -. &nbsp;one two three four five six seven eight nine&nbsp<br>&nbspten eleven&nbsp; .-> _x_;\n'
        '\tmy\\20node -. &nbsp;q&nbsp; .-> a-b\\2ec;\n'
        '\t_x_ --> __end__;\n'
        '\ta-b\\2ec --> __end__;\n'
        '\tclassDef default fill:#f2f0ff,line-height:1.2\n'
        '\tclassDef first fill-opacity:0\n'
        '\tclassDef last fill:#bfb6fc\n'
    ),
    'two_branches_same_source': (
        '---\n'
        'config:\n'
        '  flowchart:\n'
        '    curve: linear\n'
        '---\n'
        'graph TD;\n'
        '\t__start__([<p>__start__</p>]):::first\n'
        '\ta(a)\n'
        '\tb(b)\n'
        '\t__end__([<p>__end__</p>]):::last\n'
        '\t__start__ --> a;\n'
        '\ta -. &nbsp;z&nbsp; .-> __end__;\n'
        '\ta -. &nbsp;x&nbsp; .-> b;\n'
        '\tb --> __end__;\n'
        '\tclassDef default fill:#f2f0ff,line-height:1.2\n'
        '\tclassDef first fill-opacity:0\n'
        '\tclassDef last fill:#bfb6fc\n'
    ),
}


@pytest.mark.parametrize("name", list(CASES))
def test_draw_mermaid_matches_langgraph(name):
    """The Mermaid text of get_graph() equals LangGraph's for the same graph."""
    assert draw(CASES[name]).draw_mermaid() == EXPECTED[name]


def test_none_and_str_labels_between_two_nodes_raise_type_error():
    """A Command destination (label None) and a labelled branch to the same node make
    LangGraph's sorted() compare None with a str; lgembed fails the same way."""
    with pytest.raises(TypeError, match="not supported between instances of"):
        draw(RAISES["none_and_str_label"])


def _structure(graph):
    return (
        [(n.id, n.name, n.metadata) for n in graph.nodes.values()],
        [tuple(e) for e in graph.edges],
    )


def test_graph_nodes_and_edges_conditional_labels():
    """B-22: labelled conditional edges (END edges first, then by target), START/END nodes."""
    assert _structure(draw(CASES["cond_dict"])) == (
        [("__start__", "__start__", None), ("a", "a", None), ("b", "b", None), ("c", "c", None), ("__end__", "__end__", None)],
        [
            ("__start__", "a", None, False),
            ("a", "__end__", "stop", True),
            ("a", "b", "go b", True),
            ("a", "c", "go c", True),
            ("b", "__end__", None, False),
            ("c", "__end__", None, False),
        ],
    )


def test_graph_without_path_map_draws_no_branch_edges():
    """B-22: a branch that "could go anywhere" adds no edges (LangGraph 1.2 simulates the
    graph); its source gets a plain edge to END and b, c stay unconnected."""
    nodes, edges = _structure(draw(CASES["cond_no_map"]))
    assert [n[0] for n in nodes] == ["__start__", "a", "b", "c", "__end__"]
    assert edges == [("__start__", "a", None, False), ("a", "__end__", None, False)]


def test_graph_without_reachable_end_has_no_end_node():
    """END is only added when some edge reaches it."""
    nodes, edges = _structure(draw(CASES["two_self_loops_no_end"]))
    assert [n[0] for n in nodes] == ["__start__", "a", "b"]
    assert edges == [
        ("__start__", "a", None, False),
        ("__start__", "b", None, False),
        ("a", "a", None, False),
        ("b", "b", None, False),
    ]


def test_graph_node_metadata_defer_and_interrupts():
    """Node metadata is copied; `defer` and `__interrupt` are added like LangGraph's."""
    nodes, _ = _structure(draw(CASES["metadata_and_interrupts"]))
    assert nodes == [
        ("__start__", "__start__", None),
        ("a", "a", {"k": "v", "n": 3, "l": [1, 2], "d": {"x": 1}, "s": "a|b[c] #1", "__interrupt": "after"}),
        ("b", "b", {"__interrupt": "before,after"}),
        ("__end__", "__end__", None),
    ]
    nodes, _ = _structure(draw(CASES["defer"]))
    assert dict((n[0], n[2]) for n in nodes)["z"] == {"defer": True}
    # interrupt "*" is a str: LangGraph's `name in "*"` marks no node
    graph = draw_graph(make_spec(CASES["linear"]), interrupt_before="*", interrupt_after="*")
    assert all(n.metadata is None for n in graph.nodes.values())


def test_graph_tools_metadata_from_runnable():
    """A node whose callable has a non-empty `tools_by_name` mapping gets `__tools`."""
    spec = make_spec(CASES["linear"])
    tool_node = types.SimpleNamespace(tools_by_name={"add": object(), "mul": object()})
    spec.nodes["a"].runnable = tool_node
    graph = draw_graph(spec)
    assert graph.nodes["a"].metadata == {"__tools": ["add", "mul"]}
    assert graph.nodes["a"].data is tool_node


def test_to_json_layout():
    """to_json(): LangGraph's edge dicts and node ids/metadata (node data differs, see module docs)."""
    data = draw(CASES["cond_dict"]).to_json()
    assert data["edges"] == [
        {"source": "__start__", "target": "a"},
        {"source": "a", "target": "__end__", "data": "stop", "conditional": True},
        {"source": "a", "target": "b", "data": "go b", "conditional": True},
        {"source": "a", "target": "c", "data": "go c", "conditional": True},
        {"source": "b", "target": "__end__"},
        {"source": "c", "target": "__end__"},
    ]
    assert [n["id"] for n in data["nodes"]] == ["__start__", "a", "b", "c", "__end__"]
    assert data["nodes"][-1] == {"id": "__end__"}


def test_draw_mermaid_options():
    """with_styles=False; curve style, node colours, word wrap and front matter."""
    graph = draw(CASES["cond_dict"])
    assert graph.draw_mermaid(with_styles=False) == (
        "graph TD;\n\t__start__ --> a;\n\ta -. &nbsp;stop&nbsp; .-> __end__;\n\ta -. &nbsp;go b&nbsp; .-> b;\n"
        "\ta -. &nbsp;go c&nbsp; .-> c;\n\tb --> __end__;\n\tc --> __end__;\n"
    )
    expected = (
        "---\nconfig:\n  flowchart:\n    curve: basis\n  theme: neutral\n  themeVariables:\n"
        "    primaryColor: '#e2e2e2'\ntitle: 'T: 1'\n---\ngraph TD;\n\t__start__([<p>__start__</p>]):::first\n"
        "\ta(a)\n\tb(b)\n\tc(c)\n\t__end__([<p>__end__</p>]):::last\n\t__start__ --> a;\n"
        "\ta -. &nbsp;stop&nbsp; .-> __end__;\n\ta -. &nbsp;go&nbsp<br>&nbspb&nbsp; .-> b;\n"
        "\ta -. &nbsp;go&nbsp<br>&nbspc&nbsp; .-> c;\n\tb --> __end__;\n\tc --> __end__;\n"
        "\tclassDef default fill:#000\n\tclassDef first x\n\tclassDef last y\n"
    )
    options = dict(
        node_colors=NodeStyles(default="fill:#000", first="x", last="y"),
        wrap_label_n_words=1,
        frontmatter_config={"title": "T: 1", "config": {"theme": "neutral", "themeVariables": {"primaryColor": "#e2e2e2"}}},
    )
    assert graph.draw_mermaid(curve_style=CurveStyle.BASIS, **options) == expected
    assert graph.draw_mermaid(curve_style="basis", **options) == expected


def test_xray_subgraph_replaces_node():
    """get_graph(xray=True): a drawn subgraph replaces its node, ids prefixed `node:`
    (text printed by LangGraph for a parent a -> child(p -> q))."""
    child = make_spec(dict(nodes=[("p", {}), ("q", {})], edges=[(S, "p"), ("p", "q"), ("q", E)]))
    parent = make_spec(dict(nodes=[("a", {}), ("child", {})], edges=[(S, "a"), ("a", "child"), ("child", E)]))
    text = draw_graph(parent, subgraphs={"child": draw_graph(child)}).draw_mermaid()
    assert text == (
        "---\nconfig:\n  flowchart:\n    curve: linear\n---\ngraph TD;\n\t__start__([<p>__start__</p>]):::first\n"
        "\ta(a)\n\t__end__([<p>__end__</p>]):::last\n\t__start__ --> a;\n\ta --> child\\3ap;\n"
        "\tchild\\3aq --> __end__;\n\tsubgraph child\n\tchild\\3ap(p)\n\tchild\\3aq(q)\n"
        "\tchild\\3ap --> child\\3aq;\n\tend\n\tclassDef default fill:#f2f0ff,line-height:1.2\n"
        "\tclassDef first fill-opacity:0\n\tclassDef last fill:#bfb6fc\n"
    )


def test_graph_api():
    """The langchain-core Graph methods that user code calls."""
    graph = Graph()
    a = graph.add_node(None, "a")
    b = graph.add_node(None, "b", metadata={"k": 1})
    assert a == Node("a", "a", None, None)
    with pytest.raises(ValueError, match=re.escape("Node with id a already exists")):
        graph.add_node(None, "a")
    assert graph.add_edge(a, b, "lbl", True) == Edge("a", "b", "lbl", True)
    with pytest.raises(ValueError, match=re.escape("Target node zz not in graph")):
        graph.add_edge(a, Node("zz", "zz", None, None))
    assert graph.first_node() == a and graph.last_node() == b
    generated = graph.add_node(None)
    assert len(generated.id) == 32 and generated.name == generated.id
    assert graph.first_node() is None
    graph.remove_node(b)
    assert graph.edges == [] and list(graph.nodes) == ["a", generated.id]


@pytest.mark.parametrize(
    "config",
    [
        {"config": {"flowchart": {"curve": "linear"}}},
        {
            "title": "My graph: x",
            "config": {
                "theme": "neutral",
                "look": "handDrawn",
                "themeVariables": {
                    "primaryColor": "#e2e2e2",
                    "n": 3,
                    "b": True,
                    "z": None,
                    "e": "",
                    "yes": "yes",
                    "num": "12",
                    "f": 1.5,
                    "big": 1e20,
                    "neg": -2,
                    "l": [1, "a", {"k": 1, "j": [2]}, [3, 4], []],
                    "d": {},
                    "tab": "a\tb",
                    "uni": "caf\u00e9",
                    "q": "it's",
                    "dash": "- x",
                    "colon": "a:b",
                    "endcolon": "a:",
                    "hash": "a #b",
                    "star": "*x",
                    "pct": "50%",
                    "tilde": "~",
                    "date": "2024-01-02",
                    "oct": "0755",
                    "hex": "0x1F",
                    "flt": "1.5e+3",
                    "inf": ".inf",
                    "sp": " x",
                    "qm": "?x",
                    "q2": "? x",
                    "on": "On",
                    "null": "NULL",
                },
            },
        },
    ],
)
def test_front_matter_yaml_matches_pyyaml(config):
    """The front matter is what langchain-core writes with yaml.dump(default_flow_style=False)."""
    yaml = pytest.importorskip("yaml")
    assert _yaml_dump(config) == yaml.dump(config, default_flow_style=False)


def test_import_draw_does_not_load_yaml_or_langchain():
    """Drawing needs neither PyYAML nor langchain-core."""
    code = (
        "import sys, lgembed.graph._draw; "
        "print([m for m in sys.modules if m.split('.')[0] in ('yaml', 'langchain_core', 'pydantic')])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
