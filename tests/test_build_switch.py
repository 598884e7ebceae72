"""The one build switch, `lgembed._engine` (docs/STYLE.md §B, §C "Selection tests").

Every module of `_engine.ENGINE` is compiled in place from its own source; the
process uses the extensions of all of them or the sources of all of them, following
LGEMBED_EXTENSIONS, and `IMPLEMENTATION` says which. The mode is read once at
import, so every selection is checked in a fresh `python -I -W error` subprocess
that puts a package directory first on sys.path (-I ignores PYTHONPATH). Missing or
stale builds are simulated in a temporary copy of `lgembed/`.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import os
import runpy
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import lgembed
from lgembed import _engine

REPO = Path(__file__).resolve().parent.parent
PACKAGE = REPO / "lgembed"
EXTENSION_SUFFIXES = tuple(importlib.machinery.EXTENSION_SUFFIXES)
BAD_VALUE = "LGEMBED_EXTENSIONS must be one of auto, off, required (got {!r})"

PROBE = (
    "import importlib, importlib.machinery as m, lgembed, lgembed.graph, lgembed._engine as e; "
    "ext = tuple(m.EXTENSION_SUFFIXES); "
    "kinds = {'c' if importlib.import_module(n).__file__.endswith(ext) else 'py' for n in e.ENGINE}; "
    "print(lgembed.IMPLEMENTATION, ','.join(sorted(kinds)))"
)
# prints IMPLEMENTATION and the kinds of files every compiled module loaded from


def run_python(code: str, mode: str | None, root: Path = REPO) -> subprocess.CompletedProcess:
    """Runs `code` in `python -I -W error` with `root` first on sys.path.

    For a copied package, `-S` also keeps site-packages out: an editable install's
    import hook would otherwise serve `lgembed.*` submodules from the repo.
    """
    env = {k: v for k, v in os.environ.items() if k != "LGEMBED_EXTENSIONS"}
    if mode is not None:
        env["LGEMBED_EXTENSIONS"] = mode
    prelude = f"import sys; sys.path.insert(0, {str(root)!r}); "
    flags = ["-I", "-W", "error"] if root == REPO else ["-I", "-S", "-W", "error"]
    return subprocess.run(
        [sys.executable, *flags, "-c", prelude + code],
        check=False,
        env=env,
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
    )


def selection(mode: str | None, root: Path = REPO) -> str:
    """"IMPLEMENTATION kinds" of a fresh process, e.g. "c c" or "py py"."""
    proc = run_python(PROBE, mode, root)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


def built() -> list[Path]:
    """The extension files of every compiled module, or a skip (a failure under required)."""
    files = []
    for name in _engine.ENGINE:
        found = _engine._extension(name)
        if found is None:
            if _engine.MODE == "required":
                pytest.fail(f"LGEMBED_EXTENSIONS=required but {name} is not built")
            pytest.skip(f"{name} is not built")
        files.append(Path(found))
    return files


def copy_package(root: Path, drop: tuple[str, ...] = ()) -> Path:
    """Copies lgembed/ to root/lgembed without the extension files of the `drop` modules."""
    dropped = {Path(*name.split(".")[1:]).as_posix() for name in drop}

    def ignore(directory: str, names: list[str]) -> set[str]:
        rel = Path(directory).relative_to(PACKAGE)
        return {
            n
            for n in names
            if n == "__pycache__"
            or (n.endswith(EXTENSION_SUFFIXES) and (rel / n.split(".", 1)[0]).as_posix() in dropped)
        }

    shutil.copytree(PACKAGE, root / "lgembed", ignore=ignore)
    return root


# --- LGEMBED_EXTENSIONS -------------------------------------------------------------


def test_auto_and_required_give_compiled():
    """§B: auto (and unset, and empty) and required select "c" for every module when built."""
    built()
    for mode in ("auto", None, "", "required"):
        assert selection(mode) == "c c", mode


def test_off_gives_pure():
    """§B: off selects "py" for every module, and the public classes are the sources'."""
    assert selection("off") == "py py"
    proc = run_python("import lgembed.channels as c; print(type(c.LastValue.update).__name__)", " OFF ")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "function"


@pytest.mark.parametrize("value", ["1", "0", "yes", "pure", "c"])
def test_bad_value_raises(value):
    """§B: an unknown value raises ValueError with the documented message."""
    proc = run_python("import lgembed", value)
    assert proc.returncode != 0
    assert f"ValueError: {BAD_VALUE.format(value)}" in proc.stderr


def test_value_is_stripped_and_lowered():
    """§B: surrounding blanks and case are ignored; the message shows the normalised value."""
    assert selection("  Off\t") == "py py"
    proc = run_python("import lgembed", " Maybe ")
    assert f"ValueError: {BAD_VALUE.format('maybe')}" in proc.stderr


def test_required_raises_without_compiled(tmp_path):
    """§B: required raises ImportError naming what is not built; auto and off use the sources."""
    root = copy_package(tmp_path, drop=_engine.ENGINE)
    proc = run_python(PROBE, "required", root)
    assert proc.returncode != 0
    assert "ImportError: LGEMBED_EXTENSIONS=required, but compiled modules are missing or stale: " in proc.stderr
    assert "lgembed._channels (not built)" in proc.stderr
    assert selection("auto", root) == "py py"
    assert selection("off", root) == "py py"


@pytest.mark.parametrize("missing", ["lgembed._algo", "lgembed.pregel._loop"])
def test_selection_is_all_or_nothing(tmp_path, missing):
    """§B: one module not built (a hot kernel or an engine module): auto uses the
    sources for all, required names it."""
    built()
    root = copy_package(tmp_path, drop=(missing,))
    assert selection("auto", root) == "py py"
    proc = run_python(PROBE, "required", root)
    assert f"{missing} (not built)" in proc.stderr


@pytest.mark.parametrize(
    ("edited", "module"),
    [
        ("pregel/_node.py", "lgembed.pregel._node"),
        ("pregel/_loop.pxd", "lgembed.pregel._loop"),
        ("_channels.py", "lgembed._channels"),
        ("_algo.pxd", "lgembed._algo"),
    ],
)
def test_stale_build_is_never_used(tmp_path, edited, module):
    """§B, the one staleness rule: a source (or the augmenting .pxd that types it) edited
    after its build wins: auto uses the sources for every module, required refuses and
    names the stale one."""
    built()
    root = copy_package(tmp_path)
    path = root / "lgembed" / edited
    assert path.exists()
    stem = path.name.split(".")[0]
    ext = next(p for p in path.parent.glob(f"{stem}.*") if p.name.endswith(EXTENSION_SUFFIXES))
    later = ext.stat().st_mtime + 60
    os.utime(path, (later, later))
    assert selection("auto", root) == "py py"
    proc = run_python(PROBE, "required", root)
    assert proc.returncode != 0
    assert f"{module} (source newer than its build)" in proc.stderr


def test_source_only_modules_ignore_a_build_beside_them(tmp_path):
    """§B: `_engine.SOURCE_ONLY` modules load from source in every mode, even when an
    extension file of their name lies beside them (here a renamed copy of another
    module's build, which could not even be imported as this module)."""
    files = built()
    root = copy_package(tmp_path)
    suffix = next(s for s in EXTENSION_SUFFIXES if files[0].name.endswith(s))
    for name in _engine.SOURCE_ONLY:
        target = root / Path(*name.split(".")).with_suffix("")
        shutil.copy(root / "lgembed" / files[0].relative_to(PACKAGE), str(target) + suffix)
    code = (
        "import importlib, lgembed.graph, lgembed._engine as e; "
        "print(','.join(importlib.import_module(n).__file__.rsplit('.', 1)[-1] for n in e.SOURCE_ONLY))"
    )
    for mode in ("auto", "required", "off"):
        proc = run_python(code, mode, root)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.strip() == ",".join("py" for _ in _engine.SOURCE_ONLY)


# --- this process -----------------------------------------------------------------------


def test_implementation_is_the_whole_truth():
    """§B: IMPLEMENTATION names the build every compiled module of this process loaded from."""
    assert _engine.IMPLEMENTATION in ("c", "py")
    assert lgembed.IMPLEMENTATION == _engine.IMPLEMENTATION
    if _engine.MODE == "off":
        assert _engine.IMPLEMENTATION == "py"
    if _engine.MODE == "required":
        assert _engine.IMPLEMENTATION == "c"
    importlib.import_module("lgembed.graph")  # loads the engine
    for name in _engine.ENGINE:
        module = importlib.import_module(name)
        assert module.__file__.endswith(EXTENSION_SUFFIXES if _engine.IMPLEMENTATION == "c" else (".py",)), name


def test_version_prints_one_build():
    """§B: `python -m lgembed --version` names the one build in use."""
    for mode in ("off", "required"):
        if mode == "required":
            built()
        env = {k: v for k, v in os.environ.items() if k != "LGEMBED_EXTENSIONS"}
        env["LGEMBED_EXTENSIONS"] = mode
        proc = subprocess.run(
            [sys.executable, "-m", "lgembed", "--version"], env=env, cwd=REPO, capture_output=True, text=True, timeout=60
        )
        kind = "py" if mode == "off" else "c"
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.strip() == f"lgembed 0.1.0 ({kind} build, LGEMBED_EXTENSIONS={mode})"


def test_import_is_light():
    """§H: importing lgembed.channels loads no serializer, database or asyncio."""
    code = (
        "import lgembed.channels; "
        "heavy = ('msgpack', 'lmdb', 'asyncio', 'importlib.metadata', 'serial', 'can', 'periphery'); "
        "print(sorted(m for m in heavy if m in sys.modules))"
    )
    for mode in ("auto", "off"):
        proc = run_python(code, mode)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.strip() == "[]"


# --- both builds side by side (`load`) ------------------------------------------------


def test_load_rejects_unknown_kind():
    """§B: load() takes "c" or "py"."""
    with pytest.raises(ValueError, match="kind must be one of c, py"):
        _engine.load("pyx")


def test_impl_is_the_build_it_names(impl):
    """§C: impl[c] really is the Cython build (compiled methods), impl[py] the source;
    the two are different classes whatever build the process uses."""
    compiled_method = type(impl.LastValue.update).__name__ == "cython_function_or_method"
    assert compiled_method is (impl.IMPLEMENTATION == "c")
    assert impl.LastValue.__module__ == "lgembed._channels"
    if impl.IMPLEMENTATION == _engine.IMPLEMENTATION:
        assert impl.LastValue is sys.modules["lgembed._channels"].LastValue
        assert impl.apply_writes is sys.modules["lgembed._algo"].apply_writes
    else:
        assert impl.LastValue is not sys.modules["lgembed._channels"].LastValue
    assert _engine.load(impl.IMPLEMENTATION) is impl


def test_builds_export_the_same_names(impl_c_py):
    """§C: both builds of the hot modules define every name of their `__all__`."""
    c, py = impl_c_py
    assert sorted(vars(c)) == sorted(vars(py))


# --- the build --------------------------------------------------------------------------


def test_setup_builds_exactly_engine():
    """§B: setup.py compiles exactly `_engine.ENGINE` (read without running setup()),
    each from its own source, and the hot kernels are part of it."""
    namespace = runpy.run_path(str(REPO / "setup.py"), run_name="lgembed_setup_under_test")
    assert namespace["ENGINE"] == _engine.ENGINE
    assert len(set(_engine.ENGINE)) == len(_engine.ENGINE)
    assert set(_engine.HOT) <= set(_engine.ENGINE)
    assert not set(_engine.SOURCE_ONLY) & set(_engine.ENGINE)
    for name in _engine.ENGINE:
        assert (REPO / (name.replace(".", "/") + ".py")).exists(), name


def test_build_stamp_covers_every_compiled_source_and_pxd():
    """§B: tools/_build_stamp.py changes when any compiled source or .pxd changes
    (the quick-start commands reuse .venv only when it does not)."""
    stamp = runpy.run_path(str(REPO / "tools" / "_build_stamp.py"), run_name="stamp_under_test")
    names = stamp["_tuple"](PACKAGE / "_engine.py", "ENGINE")
    assert tuple(names) == _engine.ENGINE
