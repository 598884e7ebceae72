"""The firmware bridge's C library, through its own Makefile (issue: firmware bridge).

`make -C firmware-bridge test` (unit + vector tests under ASan/UBSan, -m32, a build per
compile option), `make cortex-m` (Cortex-M0+ and M4 builds, sizes printed) and a short
libFuzzer run of the decoders. The C code does not depend on lgembed's Python build, so
these run once, in the compiled pass of tools/test.sh, and are skipped (with that reason)
under LGEMBED_EXTENSIONS=off.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.skipif(
    os.environ.get("LGEMBED_EXTENSIONS") == "off",
    reason="the C library's tests run once, in the compiled pass (they do not use lgembed's Python build)",
)


def _make(*args: str, timeout: float = 900) -> subprocess.CompletedProcess:
    if shutil.which("make") is None:
        pytest.fail("make is not installed (tools/_system_deps.sh installs it)")
    out = subprocess.run(["make", "-C", str(ROOT / "firmware-bridge"), *args], capture_output=True, text=True, timeout=timeout)
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-4000:]
    return out


def test_host_unit_tests_with_sanitizers_and_m32():
    _make("test")


def test_cortex_m_builds_print_their_sizes():
    out = _make("cortex-m")
    text = out.stdout + out.stderr
    assert "cortex-m0plus" in text.lower() or "m0+" in text.lower(), text[-2000:]
    assert "m4" in text.lower(), text[-2000:]


def test_short_libfuzzer_run():
    out = subprocess.run(
        ["bash", str(ROOT / "tools" / "fuzz-bridge-c.sh"), "--runs", "20000"],
        capture_output=True, text=True, timeout=900,
    )
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-4000:]
