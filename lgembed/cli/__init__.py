"""The `lgembed` command's subcommands (run, threads, graph, doctor, unit); `serve` lives in
`lgembed.service.app`.

Why a package of its own: the command is the top layer (docs/DESIGN.md §2). Nothing below it
imports it, and importing it loads no graph, storage or server module; each subcommand
imports what it needs when it runs. The dispatcher is `lgembed.__main__.main`.
"""

from __future__ import annotations

__all__ = ()
