"""The outputs of tools/wheels.sh, when present: every wheel matches its tags (issue 13).

Why: a cross build can exit 0 and still be wrong (an aarch64 ELF inside a wheel tagged
x86_64). tools/wheels.sh checks its outputs when it builds them; these tests re-check
whatever lies in dist/ and wheelhouse/ in the normal suite, and are skipped when the
script has not been run. The checker itself is tested on hand-made wheels, so it cannot
pass by checking nothing.
"""

from __future__ import annotations

import importlib.util
import io
import tarfile
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SPEC = importlib.util.spec_from_file_location("check_wheels", ROOT / "tools" / "arm" / "check_wheels.py")
check_wheels = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(check_wheels)

DIST = sorted((ROOT / "dist").glob("lgembed-*.whl"))
WHEELHOUSE = sorted((ROOT / "wheelhouse").glob("*.whl"))
SDISTS = sorted((ROOT / "dist").glob("lgembed-*.tar.gz"))
TARGETS = [(py, arch) for py in ("cp311", "cp313") for arch in ("x86_64", "aarch64", "armv7l")]


def _read(rel: str) -> str:
    return (ROOT / rel).read_text(encoding="utf-8")


def _elf(bits: int, machine: int) -> bytes:
    """A minimal ELF header: class, little-endian, e_machine."""
    head = bytearray(64)
    head[:4] = b"\x7fELF"
    head[4] = 1 if bits == 32 else 2
    head[5] = 1
    head[18:20] = machine.to_bytes(2, "little")
    return bytes(head)


def _wheel(tmp_path: Path, name: str, files: dict[str, bytes], purelib: bool) -> str:
    path = tmp_path / name
    with zipfile.ZipFile(path, "w") as z:
        for n, data in files.items():
            z.writestr(n, data)
        z.writestr("x-1.dist-info/WHEEL", f"Wheel-Version: 1.0\nRoot-Is-Purelib: {str(purelib).lower()}\n")
    return str(path)


# --- the checker on hand-made wheels ---------------------------------------------------


def test_checker_accepts_a_matching_wheel(tmp_path):
    w = _wheel(tmp_path, "x-1-cp311-cp311-manylinux_2_17_aarch64.whl",
               {"x/_m.cpython-311-aarch64-linux-gnu.so": _elf(64, 183)}, purelib=False)
    problems, facts = check_wheels.wheel_problems(w)
    assert problems == []
    assert facts["arch"] == "aarch64" and facts["exts"] == 1


def test_checker_catches_the_cross_build_trap(tmp_path):
    # the spike's trap: an aarch64 ELF named and tagged x86_64
    w = _wheel(tmp_path, "x-1-cp311-cp311-linux_x86_64.whl",
               {"x/_m.cpython-311-x86_64-linux-gnu.so": _elf(64, 183)}, purelib=False)
    problems, _ = check_wheels.wheel_problems(w)
    assert problems == ["x/_m.cpython-311-x86_64-linux-gnu.so: ELF 64-bit machine aarch64, the tag says x86_64"]


def test_checker_catches_a_wrong_suffix_and_class(tmp_path):
    w = _wheel(tmp_path, "x-1-cp313-cp313-manylinux_2_17_armv7l.whl",
               {"x/_m.cpython-313-aarch64-linux-gnu.so": _elf(64, 183)}, purelib=False)
    problems, _ = check_wheels.wheel_problems(w)
    assert any("the tag says armv7l" in p for p in problems)
    assert any("file suffix is not .cpython-313-arm-linux-gnueabihf.so" in p for p in problems)


def test_checker_demands_every_compiled_module(tmp_path):
    w = _wheel(tmp_path, "lgembed-1-cp311-cp311-manylinux_2_17_x86_64.whl",
               {"lgembed/_algo.cpython-311-x86_64-linux-gnu.so": _elf(64, 62)}, purelib=False)
    problems, _ = check_wheels.wheel_problems(w, {"lgembed._algo", "lgembed._channels"})
    assert problems == ["compiled modules missing: ['lgembed._channels']"]


def test_checker_refuses_elf_in_a_pure_wheel(tmp_path):
    w = _wheel(tmp_path, "x-1-py3-none-any.whl", {"x/_m.cpython-311-x86_64-linux-gnu.so": _elf(64, 62)}, purelib=True)
    problems, _ = check_wheels.wheel_problems(w)
    assert problems == ["pure wheel holds ELF files: ['x/_m.cpython-311-x86_64-linux-gnu.so']"]


def test_checker_sdist_needs_the_generated_c(tmp_path):
    path = tmp_path / "lgembed-1.tar.gz"
    with tarfile.open(path, "w:gz") as t:
        for rel in ("lgembed/_engine.py",):
            data = _read(rel).encode()
            info = tarfile.TarInfo(f"lgembed-1/{rel}")
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))
    problems = check_wheels.sdist_problems(str(path))
    expected = check_wheels.expected_modules(_read)
    assert len([p for p in problems if "generated C" in p]) == len(expected)


def test_expected_modules_are_setup_pys():
    """The checker's list of compiled modules is the one setup.py builds."""
    import runpy

    ns = runpy.run_path(str(ROOT / "setup.py"), run_name="lgembed_setup_under_test")
    assert check_wheels.expected_modules(_read) == set(ns["ENGINE"])


# --- the outputs of tools/wheels.sh, when present ----------------------------------------

def _dist_is_stale() -> bool:
    """Whether dist/ was built from other sources than this tree's (tools/wheels.sh writes
    dist/.source-key; tools/arm/common.sh's source_key computes the tree's)."""
    import subprocess

    built = ROOT / "dist" / ".source-key"
    if not built.exists():
        return True
    out = subprocess.run(
        ["bash", "-c", "source tools/arm/common.sh && source_key"],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    return out.returncode != 0 or out.stdout.strip() != built.read_text().strip()


needs_dist = pytest.mark.skipif(not DIST, reason="dist/ has no lgembed wheels: run bash tools/wheels.sh")
current_dist = pytest.mark.skipif(
    bool(DIST) and _dist_is_stale(),
    reason="dist/ was built from other sources than this tree: rerun bash tools/wheels.sh "
    "(tools/test.sh does, before the tests, when it runs the ARM stages)",
)


@needs_dist
@current_dist
@pytest.mark.parametrize("wheel", DIST + WHEELHOUSE, ids=lambda p: p.name)
def test_built_wheel_matches_its_tags(wheel):
    problems, facts = check_wheels.wheel_problems(str(wheel), check_wheels.expected_modules(_read))
    assert problems == []
    if wheel.name.startswith("lgembed-") and facts["arch"] != "any":
        assert ".manylinux_2_17_" in wheel.name or "manylinux2014_" in wheel.name


@needs_dist
def test_dist_has_every_target():
    names = [p.name for p in DIST]
    missing = [f"{py} {arch}" for py, arch in TARGETS
               if not any(f"-{py}-{py}-" in n and n.endswith(f"_{arch}.whl") for n in names)]
    assert missing == []
    assert any(n.endswith("-py3-none-any.whl") for n in names)
    assert SDISTS, "no sdist in dist/"


@needs_dist
def test_wheelhouse_covers_the_runtime_dependencies():
    """An offline board install needs msgpack and lmdb for every target next to lgembed."""
    names = [p.name for p in WHEELHOUSE]
    missing = [f"{proj} {py} {arch}" for proj in ("msgpack", "lmdb") for py, arch in TARGETS
               if not any(n.startswith(f"{proj}-") and f"-{py}-{py}-" in n and n.endswith(f"_{arch}.whl") for n in names)]
    assert missing == []


@needs_dist
@pytest.mark.skipif(not SDISTS, reason="no sdist in dist/")
def test_sdist_carries_the_generated_c():
    assert check_wheels.sdist_problems(str(SDISTS[-1])) == []



# --- tools/arm/qemu-skips.txt: what the emulated suite leaves out ----------------------


def _qemu_skips() -> list[tuple[str, str, str]]:
    """(arch or "", node id, reason) per line, parsed as tools/test-arm.sh parses it."""
    out = []
    for line in _read("tools/arm/qemu-skips.txt").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        arch = ""
        if line.split(":", 1)[0] in ("aarch64", "armv7l"):
            arch, line = line.split(": ", 1)
        node, _, reason = line.partition("  ")
        out.append((arch, node, reason.strip()))
    return out


def test_every_qemu_deselection_names_a_test_and_says_why():
    """Issue 13 acceptance 2: tests left out under emulation are listed with their reasons;
    a renamed or deleted test must not leave a stale line behind (nor hide a new test)."""
    skips = _qemu_skips()
    assert skips
    for arch, node, reason in skips:
        path, _, name = node.partition("::")
        assert (ROOT / path).is_file(), node
        assert len(reason) >= 40, f"{node}: the reason must say why ({reason!r})"
        if name:
            assert f"def {name.split('[')[0]}(" in _read(path), node
