#!/usr/bin/env python3
"""Point the repository's references to the team documents at the copies in docs/.

Why this script exists: code, tests and docs used to cite documents that lived outside
the repository (`../shared/DESIGN.md`, `STYLE.md`, `reference/langgraph-semantics.md`
and its statement codes). Their content now lives in `docs/DESIGN.md`, `docs/STYLE.md`
and `docs/BEHAVIOUR.md`, with the same section numbers and codes, so a citation only
needs its document name changed:

    ../shared/DESIGN.md, DESIGN.md §3         -> docs/DESIGN.md, docs/DESIGN.md §3
    STYLE.md §B                               -> docs/STYLE.md §B
    reference/langgraph-semantics.md §4       -> docs/BEHAVIOUR.md §4
    (reference §13 M-3), reference C-10       -> (docs/BEHAVIOUR.md §13 M-3), docs/BEHAVIOUR.md C-10
    the reference says / the reference doc    -> docs/BEHAVIOUR.md says / docs/BEHAVIOUR.md

    python tools/rewrite_doc_refs.py            # tracked files, except other branches' (below)
    python tools/rewrite_doc_refs.py --all      # every tracked file (after merging)
    python tools/rewrite_doc_refs.py --check    # list what would change, exit 1 if anything
    python tools/rewrite_doc_refs.py PATH...    # only these files

Idempotent: a rewritten reference no longer matches (every pattern refuses a name
already preceded by `docs/`), so running it twice changes nothing the second time.
`tests/test_repo_self_standing.py` fails while any reference is left.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

DESIGN_SECTIONS = {"1": "1", "2": "2", "3": "3", "4": "4", "5": "5", "5b": "5b", "6": "6"}
# section of the old DESIGN.md -> section of docs/DESIGN.md (kept the same on purpose)

STYLE_SECTIONS = {k: k for k in "ABCDEFGH"}
# section letter of the old STYLE.md -> docs/STYLE.md (the same letters)

SKIP = (
    "docs/",  # the documents themselves
    "tools/rewrite_doc_refs.py",  # this script's patterns
    "tests/test_repo_self_standing.py",  # the check's patterns
)
# paths (prefixes) never rewritten

OTHER_BRANCHES = (
    "lgembed/pregel/",
    "lgembed/checkpoint/",
    "lgembed/channels/",
    "lgembed/_speedups.py",
    "lgembed/_engine.py",
    "lgembed/_algo_py.py",
    "lgembed/_channels_py.py",
    "lgembed/_ids.pxd",
    "lgembed/graph/_branch.pxd",
    "lgembed/graph/message.py",
    "lgembed/messages.py",
    "lgembed/prebuilt/tool_node.py",
    "cext/",
    "setup.py",
)
# files other branches of issue 15 edit: left alone unless --all (the lead runs --all
# after merging them)

_NOT_AFTER = r"(?<![\w/.-])"
# a name not already part of a path (docs/DESIGN.md, ../shared/DESIGN.md) or a word

_RULES: tuple[tuple[re.Pattern, object], ...] = (
    (re.compile(r"(?:\.\./shared/|/work/shared/)?reference/langgraph-semantics\.md"), "docs/BEHAVIOUR.md"),
    (re.compile(_NOT_AFTER + r"langgraph-semantics\.md"), "docs/BEHAVIOUR.md"),
    (re.compile(r"(?:\.\./shared/|/work/shared/)(DESIGN|STYLE)\.md"), r"docs/\1.md"),
    (
        re.compile(_NOT_AFTER + r"DESIGN\.md(?: §(\d+b?))?"),
        lambda m: "docs/DESIGN.md" + (f" §{DESIGN_SECTIONS.get(m[1], m[1])}" if m[1] else ""),
    ),
    (
        re.compile(_NOT_AFTER + r"STYLE\.md(?: §([A-H]))?"),
        lambda m: "docs/STYLE.md" + (f" §{STYLE_SECTIONS.get(m[1], m[1])}" if m[1] else ""),
    ),
    (re.compile(r"\b(?:the )?[Rr]eference doc(?:ument)?\b"), "docs/BEHAVIOUR.md"),
    (re.compile(r"\bthe reference says\b"), "docs/BEHAVIOUR.md says"),
    (re.compile(r"\b(?:the )?[Rr]eference(\s+)(?=§|[A-Z]{1,3}-\d)"), r"docs/BEHAVIOUR.md\1"),
)
# (pattern, replacement) applied in order; each refuses its own output


def rewrite(text: str) -> str:
    """`text` with every reference to the outside documents pointed at docs/."""
    for pattern, repl in _RULES:
        text = pattern.sub(repl, text)
    return text


def tracked_files() -> list[str]:
    """The repository's tracked files, relative to its root."""
    out = subprocess.run(
        ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    return out.splitlines()


def selected(paths: list[str], include_others: bool) -> list[str]:
    """`paths` minus the skipped ones (and other branches' files unless `include_others`)."""
    skip = SKIP if include_others else SKIP + OTHER_BRANCHES
    return [p for p in paths if not p.startswith(skip)]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("paths", nargs="*", help="files to rewrite (default: the tracked files)")
    p.add_argument("--all", action="store_true", help="include other branches' files")
    p.add_argument("--check", action="store_true", help="change nothing; exit 1 if a file would change")
    args = p.parse_args(argv)
    paths = args.paths or selected(tracked_files(), args.all)
    changed = []
    for rel in paths:
        path = ROOT / rel if not Path(rel).is_absolute() else Path(rel)
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, IsADirectoryError, FileNotFoundError):
            continue  # binary, a submodule or deleted in the work tree
        new = rewrite(text)
        if new != text:
            changed.append(rel)
            if not args.check:
                path.write_text(new, encoding="utf-8")
    verb = "would change" if args.check else "changed"
    for rel in changed:
        print(f"{verb}: {rel}")
    print(f"{len(changed)} file(s) {verb}", file=sys.stderr)
    return 1 if args.check and changed else 0


if __name__ == "__main__":
    sys.exit(main())
