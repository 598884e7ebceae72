"""The repository stands on its own: no tracked file points at documents outside it.

Why: code, tests and docs cite the design, the style guide and LangGraph's behaviour
statements (codes such as `L-10`, `N-5`). Those documents live in `docs/`
(`DESIGN.md`, `STYLE.md`, `BEHAVIOUR.md`); a citation of `../shared/...`, of a bare
`DESIGN.md`, or of a code that `docs/BEHAVIOUR.md` does not define leaves a reader of
this repository with nothing to follow. `tools/rewrite_doc_refs.py` fixes the first
kind; a missing code needs its statement added to `docs/BEHAVIOUR.md`.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

OUTSIDE_DOCS = re.compile(
    r"\.\./shared/(?!conformance\b)"  # ../shared/DESIGN.md, ../shared/reference/...
    r"|/work/shared\b"
    r"|langgraph-semantics"
    r"|(?<![\w/.-])(?:DESIGN|STYLE)\.md"  # a bare DESIGN.md / STYLE.md (not docs/...)
    r"|\b[Rr]eference\s+§"  # "reference §5": the old document's sections
)
# a reference to a team document that is not in the repository

ALLOWED = (
    "tools/rewrite_doc_refs.py",  # rewrites these references: it has to spell them
    "tests/test_repo_self_standing.py",  # this file
)
# files that may mention the outside documents on purpose (the conformance runner's
# location, ../shared/conformance, is not a document and is allowed everywhere)

PENDING_REWRITE: tuple[str, ...] = ()
# Files that other branches of issue 15 edit, left out of this branch's rewrite so the
# merges do not conflict. After merging, run `python tools/rewrite_doc_refs.py --all`;
# `test_pending_rewrite_list_is_current` then names every entry to delete here, and
# the list ends empty.

CODE = re.compile(r"\b([A-Z]{1,3})-(\d{1,3}[a-z]?)\b")
# a statement code as cited (B-12, L-10, O-15); other tokens of that shape (UTF-8,
# SHA-1, CRC-16) are told apart by their prefix

CODE_SCOPE = ("lgembed/", "tests/", "tools/", "examples/", "docs/", "README.md", "BENCHMARKS.md")
# where codes are cited (firmware-bridge/ has its own numbering)

MACHINE_PATHS = re.compile(r"/work/|/tmp/lgref|/home/\w")
# directories of one machine, which a newcomer's checkout does not have
MACHINE_PATH_FREE = ("BENCHMARKS.md", "README.md", "tools/README.md")


def _tracked() -> dict[str, str]:
    try:
        out = subprocess.run(
            ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
        ).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        pytest.skip(f"not a git checkout ({e}); the check reads the tracked files")
    files = {}
    for rel in out.decode().split("\0"):
        path = ROOT / rel
        if not rel or not path.is_file():
            continue
        try:
            files[rel] = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue  # binary
    return files


def _defined_codes() -> set[str]:
    text = (ROOT / "docs" / "BEHAVIOUR.md").read_text(encoding="utf-8")
    return set(re.findall(r"^- \*\*([A-Z]{1,3}-\d{1,3}[a-z]?)\*\*", text, re.M))


def _hits(text: str) -> list[str]:
    lines = []
    for m in OUTSIDE_DOCS.finditer(text):
        line = text.count("\n", 0, m.start()) + 1
        lines.append(f"line {line}: {m.group(0)!r}")
    return lines


def test_no_file_refers_to_documents_outside_the_repository():
    problems = []
    for rel, text in _tracked().items():
        if rel in ALLOWED or rel in PENDING_REWRITE:
            continue
        hits = _hits(text)
        if hits:
            problems.append(f"{rel}: " + "; ".join(hits[:3]))
    assert not problems, (
        "these files cite documents that are not in the repository; run "
        "`python tools/rewrite_doc_refs.py` (docs/DESIGN.md, docs/STYLE.md and "
        "docs/BEHAVIOUR.md keep the old section numbers and codes):\n" + "\n".join(problems)
    )


def test_pending_rewrite_list_is_current():
    files = _tracked()
    stale = [rel for rel in PENDING_REWRITE if rel not in files or not _hits(files[rel])]
    assert not stale, (
        "these files no longer cite outside documents: delete them from PENDING_REWRITE "
        "in tests/test_repo_self_standing.py:\n" + "\n".join(stale)
    )


def test_every_cited_code_is_defined_in_behaviour_md():
    defined = _defined_codes()
    assert len(defined) > 150, "docs/BEHAVIOUR.md lost its statements (format '- **B-1** ...')"
    prefixes = {code.split("-")[0] for code in defined}
    missing: dict[str, list[str]] = {}
    for rel, text in _tracked().items():
        if not rel.startswith(CODE_SCOPE):
            continue
        for m in CODE.finditer(text):
            if m.group(1) in prefixes and m.group(0) not in defined:
                missing.setdefault(m.group(0), []).append(rel)
    assert not missing, (
        "codes cited but not defined in docs/BEHAVIOUR.md (add the statement, in our "
        "words, under its section):\n"
        + "\n".join(f"{code}: {', '.join(sorted(set(where))[:5])}" for code, where in sorted(missing.items()))
    )


@pytest.mark.parametrize("rel", MACHINE_PATH_FREE)
def test_benchmark_docs_name_no_machine_path(rel):
    text = (ROOT / rel).read_text(encoding="utf-8")
    found = sorted({m.group(0) for m in MACHINE_PATHS.finditer(text)})
    assert not found, (
        f"{rel} names directories of one machine ({', '.join(found)}); write the command "
        "a newcomer runs (bash tools/bench.sh) and paths relative to the repository"
    )
