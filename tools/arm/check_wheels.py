"""Checks built wheels and the sdist against their tags (used by tools/wheels.sh and tests/test_wheels.py).

Why: a cross build can succeed and still be wrong (the ARM spike's trap: an aarch64 ELF
named `*.cpython-311-x86_64-linux-gnu.so` inside a `linux_x86_64` wheel, exit code 0).
So every extension of every platform wheel is read: its ELF class and machine must be
the wheel's architecture, its file suffix the interpreter's EXT_SUFFIX for that tag, and
a pure wheel must hold no ELF at all. With `--src TREE`, lgembed's wheels must hold
exactly the compiled modules setup.py builds (`_engine.ENGINE`).
With `--auditwheel`, `auditwheel show` must report a manylinux tag, and the wheels built
here (lgembed's, and the armv7l dependency wheels) must need nothing newer than glibc 2.17.
ARM code is checked with `readelf -A`: ARMv7, hard-float ABI.

Usage: python tools/arm/check_wheels.py [--src TREE] [--auditwheel] [--sdist SDIST] DIR_OR_WHEEL...
Exit status 1 on any problem; a table of what was checked on stdout.
"""

from __future__ import annotations

import argparse
import ast
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile

ARCHES = {
    # wheel arch: (ELF class bits, e_machine, multiarch triplet of EXT_SUFFIX)
    "x86_64": (64, 62, "x86_64-linux-gnu"),
    "aarch64": (64, 183, "aarch64-linux-gnu"),
    "armv7l": (32, 40, "arm-linux-gnueabihf"),
}
MACHINES = {62: "x86_64", 183: "aarch64", 40: "arm"}
WHEEL_RE = re.compile(r"^(?P<name>[^-]+)-(?P<ver>[^-]+)(-\d[^-]*)?-(?P<py>[^-]+)-(?P<abi>[^-]+)-(?P<plat>[^-]+)\.whl$")
BUILT_HERE = ("lgembed",)
# projects whose every wheel is built by tools/wheels.sh (glibc 2.17 demanded); the armv7l
# dependency wheels are too (there is none on the index)


def elf_header(data: bytes) -> tuple[int, int] | None:
    """(class bits, e_machine) of an ELF image, or None if `data` is not ELF."""
    if data[:4] != b"\x7fELF":
        return None
    bits = {1: 32, 2: 64}.get(data[4], 0)
    order = "little" if data[5] == 1 else "big"
    return bits, int.from_bytes(data[18:20], order)


def read_tuple(text: str, name: str) -> tuple[str, ...]:
    """The literal tuple assigned to `name` in a module's source text."""
    for node in ast.parse(text).body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == name for t in node.targets):
            return tuple(ast.literal_eval(node.value))
    msg = f"no literal `{name} = (...)`"
    raise ValueError(msg)


def expected_modules(read) -> set[str]:
    """Dotted names of the compiled modules, from `read(relative_path) -> text` of a tree."""
    return set(read_tuple(read("lgembed/_engine.py"), "ENGINE"))


def parse_name(path: str) -> dict:
    m = WHEEL_RE.match(os.path.basename(path))
    if not m:
        msg = f"not a wheel file name: {os.path.basename(path)}"
        raise ValueError(msg)
    return m.groupdict()


def wheel_arch(plat: str) -> str | None:
    """The architecture of a platform tag set (`manylinux2014_aarch64.manylinux_2_17_aarch64`), None for any."""
    if plat == "any":
        return None
    arches = set()
    for p in plat.split("."):
        for a in ARCHES:
            if p.endswith("_" + a):
                arches.add(a)
    if len(arches) != 1:
        msg = f"platform tag {plat!r} names no single known architecture"
        raise ValueError(msg)
    return arches.pop()


def _arm_attributes(data: bytes) -> str:
    """`readelf -A` of an ARM ELF image ('' without readelf)."""
    readelf = shutil.which("readelf")
    if not readelf:
        return ""
    with tempfile.NamedTemporaryFile(suffix=".so") as f:
        f.write(data)
        f.flush()
        return subprocess.run([readelf, "-A", f.name], capture_output=True, text=True, check=False).stdout


def wheel_problems(path: str, expected: set[str] | None = None) -> tuple[list[str], dict]:
    """Problems of one wheel (empty if it matches its tags) and facts for the table.

    Args:
        path: the .whl file.
        expected: for lgembed's compiled wheels, the dotted module names that must be
            compiled (from `expected_modules`); None skips that check.
    """
    tags = parse_name(path)
    problems: list[str] = []
    facts = {"size": os.path.getsize(path), "arch": "any", "exts": 0, "elf": "-"}
    try:
        arch = wheel_arch(tags["plat"])
    except ValueError as e:
        return [str(e)], facts
    with zipfile.ZipFile(path) as z:
        names = z.namelist()
        wheel_meta = next((n for n in names if n.endswith(".dist-info/WHEEL")), None)
        meta = z.read(wheel_meta).decode() if wheel_meta else ""
        purelib = "Root-Is-Purelib: true" in meta
        elfs = {}
        for n in names:
            if n.endswith(".so") or ".so." in n:
                elfs[n] = z.read(n)
    if arch is None:
        if elfs:
            problems.append(f"pure wheel holds ELF files: {sorted(elfs)}")
        if not purelib:
            problems.append("pure wheel without Root-Is-Purelib: true")
        if tags["abi"] != "none":
            problems.append(f"pure wheel with ABI tag {tags['abi']}")
        return problems, facts
    facts["arch"] = arch
    bits, machine, triplet = ARCHES[arch]
    if purelib:
        problems.append("platform wheel marked Root-Is-Purelib: true")
    if not elfs:
        problems.append("platform wheel without any compiled extension")
    py = tags["py"]
    m = re.fullmatch(r"cp(\d)(\d+)", py)
    suffix = f".cpython-{m.group(1)}{m.group(2)}-{triplet}.so" if m else None
    seen_machines = set()
    modules = set()
    for n, data in elfs.items():
        head = elf_header(data)
        if head is None:
            problems.append(f"{n}: not an ELF file")
            continue
        seen_machines.add(MACHINES.get(head[1], str(head[1])))
        if head != (bits, machine):
            problems.append(f"{n}: ELF {head[0]}-bit machine {MACHINES.get(head[1], head[1])}, the tag says {arch}")
        if ".libs/" in n:
            continue  # a vendored shared library (auditwheel repair), not an extension module
        if suffix and not n.endswith(suffix):
            problems.append(f"{n}: file suffix is not {suffix}")
        if suffix and n.endswith(suffix):
            modules.add(n[: -len(suffix)].replace("/", "."))
        if arch == "armv7l":
            attrs = _arm_attributes(data)
            if attrs and ("Tag_CPU_arch: v7" not in attrs or "VFP registers" not in attrs):
                problems.append(f"{n}: not ARMv7 hard-float code (readelf -A: {' '.join(attrs.split())[:200]})")
    facts["exts"] = len(elfs)
    facts["elf"] = ",".join(sorted(seen_machines)) or "-"
    if expected is not None and tags["name"] == "lgembed":
        missing, extra = expected - modules, modules - expected
        if missing:
            problems.append(f"compiled modules missing: {sorted(missing)}")
        if extra:
            problems.append(f"unexpected compiled modules: {sorted(extra)}")
    return problems, facts


def auditwheel_problems(path: str, strict: bool) -> tuple[list[str], str]:
    """`auditwheel show` must name a manylinux tag (glibc <= 2.17 when `strict`)."""
    out = subprocess.run(["auditwheel", "show", path], capture_output=True, text=True, check=False)
    text = " ".join((out.stdout + out.stderr).split())
    m = re.search(r'consistent with the following platform tag: "(manylinux_(\d+)_(\d+)_\w+)"', text)
    if out.returncode != 0 or not m:
        return [f"auditwheel show: no manylinux tag ({text[:300]})"], "-"
    tag, major, minor = m.group(1), int(m.group(2)), int(m.group(3))
    if strict and (major, minor) > (2, 17):
        return [f"auditwheel show: {tag}, expected manylinux_2_17 (glibc 2.17)"], tag
    return [], tag


def sdist_problems(path: str) -> list[str]:
    """The sdist must carry the generated C of every compiled module."""
    with tarfile.open(path) as t:
        names = t.getnames()
        top = names[0].split("/", 1)[0]

        def read(rel: str) -> str:
            f = t.extractfile(f"{top}/{rel}")
            return f.read().decode() if f else ""

        expected = expected_modules(read)
    have = set(names)
    problems = []
    for mod in sorted(expected):
        c = f"{top}/{mod.replace('.', '/')}.c"
        if c not in have:
            problems.append(f"sdist lacks the generated C of {mod} ({c})")
    for pxd in ("lgembed/_algo.pxd", "lgembed/_channels.pxd"):
        if f"{top}/{pxd}" not in have:
            problems.append(f"sdist lacks {pxd}")
    return problems


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("paths", nargs="*", help="wheel files or directories of wheels")
    ap.add_argument("--src", help="the source tree: lgembed's wheels must hold exactly its compiled modules")
    ap.add_argument("--auditwheel", action="store_true", help="also run `auditwheel show` on platform wheels")
    ap.add_argument("--sdist", help="check that this sdist carries the generated C")
    args = ap.parse_args(argv)
    bad = 0
    if args.sdist:
        for p in sdist_problems(args.sdist):
            print(f"FAIL {os.path.basename(args.sdist)}: {p}")
            bad += 1
        if not bad:
            print(f"ok   {os.path.basename(args.sdist)}: generated C of every compiled module present")
    expected = None
    if args.src:
        expected = expected_modules(lambda rel: open(os.path.join(args.src, rel), encoding="utf-8").read())
    wheels = []
    for p in args.paths:
        if os.path.isdir(p):
            wheels += sorted(os.path.join(p, n) for n in os.listdir(p) if n.endswith(".whl"))
        else:
            wheels.append(p)
    if wheels:
        print(f"{'wheel':<84} {'kB':>6} {'arch':<7} {'ELF':<8} {'so':>3}  auditwheel")
    for w in wheels:
        problems, facts = wheel_problems(w, expected)
        tag = ""
        if args.auditwheel and facts["arch"] != "any":
            name = parse_name(w)["name"]
            strict = name in BUILT_HERE or facts["arch"] == "armv7l"
            more, tag = auditwheel_problems(w, strict)
            problems += more
        print(f"{os.path.basename(w):<84} {facts['size'] // 1024:>6} {facts['arch']:<7} {facts['elf']:<8} {facts['exts']:>3}  {tag}")
        for p in problems:
            print(f"  FAIL: {p}")
        bad += len(problems)
    if bad:
        print(f"{bad} problem(s)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
