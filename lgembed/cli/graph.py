"""`lgembed graph MODULE:ATTR`: the graph as Mermaid text.

Why: to see on a board what a deployed graph's nodes and edges are (paste the text into
any Mermaid viewer), without LangGraph or a notebook. The text is
`graph.get_graph().draw_mermaid()`, LangGraph's own format.
"""

from __future__ import annotations

import argparse
import sys

from lgembed.cli._common import CliError, describe, load_target, resolve_graph

__all__ = ("add_arguments", "main")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Adds `graph`'s arguments to `parser`."""
    parser.add_argument(
        "target", metavar="MODULE:ATTR", help="a StateGraph builder or compiled graph (or file.py:ATTR)"
    )
    parser.add_argument("--xray", action="store_true", help="draw the insides of subgraphs too")


def main(args: argparse.Namespace) -> int:
    """Prints the Mermaid text of the graph; returns 0.

    Raises:
        UsageError: a malformed MODULE:ATTR.
        CliError: the graph cannot be loaded or drawn.
    """
    graph = resolve_graph(load_target(args.target), args.target)
    try:
        text = graph.get_graph(xray=args.xray).draw_mermaid()
    except Exception as e:  # user graphs
        raise CliError(f"Drawing graph '{args.target}': {describe(e)}") from e
    sys.stdout.write(text if text.endswith("\n") else text + "\n")
    sys.stdout.flush()
    return 0
