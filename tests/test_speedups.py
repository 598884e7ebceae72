"""Selection of the compiled or pure build (docs/STYLE.md §B, §C "Selection tests").

`lgembed._speedups` reads LGEMBED_EXTENSIONS once at import, so every selection is
checked in a fresh `python -I -W error` subprocess that puts a package directory
first on sys.path (-I ignores PYTHONPATH). Packages without compiled modules are
simulated with a temporary copy of `lgembed/` that leaves the extension files out.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import os
import runpy
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from lgembed import _speedups

REPO = Path(__file__).resolve().parent.parent
PACKAGE = REPO / "lgembed"
EXTENSION_SUFFIXES = tuple(importlib.machinery.EXTENSION_SUFFIXES)
BAD_VALUE = "LGEMBED_EXTENSIONS must be one of auto, off, required (got {!r})"


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


def implementation(mode: str | None, root: Path = REPO) -> str:
    proc = run_python("import lgembed._speedups as s; print(s.IMPLEMENTATION)", mode, root)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


def compiled_files() -> list[Path]:
    """The extension files of every hot module, or a skip when not built.

    Under LGEMBED_EXTENSIONS=required a missing build fails instead of skipping.
    """
    files = []
    for name in _speedups._HOT:
        found = [p for p in PACKAGE.glob(f"_{name}_c.*") if p.name.endswith(EXTENSION_SUFFIXES)]
        if not found:
            if _speedups.MODE == "required":
                pytest.fail(f"LGEMBED_EXTENSIONS=required but lgembed._{name}_c is not built")
            pytest.skip(f"lgembed._{name}_c is not built")
        files.extend(found)
    return files


def copy_package(tmp_path: Path, drop: tuple[str, ...]) -> Path:
    """Copies lgembed/ to tmp_path/lgembed without the extension files of the `drop` modules."""
    dropped = {f"_{name}_c" for name in drop}

    def ignore(directory: str, names: list[str]) -> set[str]:
        return {
            n
            for n in names
            if n == "__pycache__" or (n.endswith(EXTENSION_SUFFIXES) and n.split(".", 1)[0] in dropped)
        }

    shutil.copytree(PACKAGE, tmp_path / "lgembed", ignore=ignore)
    return tmp_path


# --- LGEMBED_EXTENSIONS -------------------------------------------------------------


def test_auto_prefers_compiled():
    """§B: auto (and unset, and empty) selects "c" when every twin is built."""
    compiled_files()
    assert implementation("auto") == "c"
    assert implementation(None) == "c"
    assert implementation("") == "c"


def test_required_gives_compiled():
    """§B: required selects "c" when built."""
    compiled_files()
    assert implementation("required") == "c"


def test_off_gives_pure():
    """§B: off selects "py", and the public classes are the pure ones."""
    assert implementation("off") == "py"
    proc = run_python("import lgembed.channels as c; print(c.LastValue.__module__)", " OFF ")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "lgembed._channels_py"


@pytest.mark.parametrize("value", ["1", "0", "yes", "pure", "c"])
def test_bad_value_raises(value):
    """§B: an unknown value raises ValueError with the documented message."""
    proc = run_python("import lgembed._speedups", value)
    assert proc.returncode != 0
    assert f"ValueError: {BAD_VALUE.format(value)}" in proc.stderr


def test_value_is_stripped_and_lowered():
    """§B: surrounding blanks and case are ignored; the message shows the normalised value."""
    assert implementation("  Off\t") == "py"
    proc = run_python("import lgembed._speedups", " Maybe ")
    assert f"ValueError: {BAD_VALUE.format('maybe')}" in proc.stderr


def test_required_raises_without_compiled(tmp_path):
    """§B: required raises ImportError when the compiled modules are missing."""
    root = copy_package(tmp_path, drop=_speedups._HOT)
    proc = run_python("import lgembed._speedups", "required", root)
    assert proc.returncode != 0
    assert (
        "ImportError: LGEMBED_EXTENSIONS=required, but the compiled modules cannot be imported" in proc.stderr
    )
    assert implementation("auto", root) == "py"
    assert implementation("off", root) == "py"


def test_selection_is_all_or_nothing(tmp_path):
    """§B: if any one twin is missing, auto uses the pure build for all."""
    compiled_files()
    root = copy_package(tmp_path, drop=_speedups._HOT[-1:])
    assert implementation("auto", root) == "py"
    proc = run_python("import lgembed._speedups", "required", root)
    assert f"lgembed._{_speedups._HOT[-1]}_c" in proc.stderr


def test_stray_pure_twin_is_not_taken_for_compiled(tmp_path):
    """§B: a `_x_c.py` file (e.g. a leftover copy of the pure source) is not a compiled build."""
    root = copy_package(tmp_path, drop=_speedups._HOT)
    for name in _speedups._HOT:
        shutil.copy(root / "lgembed" / f"_{name}_py.py", root / "lgembed" / f"_{name}_c.py")
    assert implementation("auto", root) == "py"
    proc = run_python("import lgembed._speedups", "required", root)
    assert "is not a compiled extension module" in proc.stderr


def test_load_rejects_unknown_kind():
    """§B: load() takes "c" or "py"."""
    with pytest.raises(ValueError, match="kind must be one of c, py"):
        _speedups.load("pyx")


# --- build and twins ---------------------------------------------------------------------


def test_setup_hot_equals_speedups_hot():
    """§B: setup.py builds exactly `_speedups._HOT` (read without running setup())."""
    namespace = runpy.run_path(str(REPO / "setup.py"), run_name="lgembed_setup_under_test")
    assert namespace["HOT"] == _speedups._HOT
    assert isinstance(_speedups._HOT, tuple) and len(set(_speedups._HOT)) == len(_speedups._HOT)


def test_impl_is_the_build_it_names(impl, request):
    """§C: impl[c] really is the Cython build (extension modules, compiled methods);
    impl[py] is the pure source."""
    kind = request.node.callspec.params["impl"]
    for name in _speedups._HOT:
        module = sys.modules[f"lgembed._{name}_{kind}"]
        if kind == "c":
            assert module.__file__.endswith(EXTENSION_SUFFIXES)
            assert isinstance(module.__spec__.loader, importlib.machinery.ExtensionFileLoader)
        else:
            assert module.__file__.endswith(".py")
    assert impl.LastValue.__module__ == f"lgembed._channels_{kind}"
    compiled_method = type(impl.LastValue.update).__name__ == "cython_function_or_method"
    assert compiled_method is (kind == "c")


def test_twins_export_the_same_names():
    """§C: `_x_py` and `_x_c` have equal `__all__` tuples."""
    compiled_files()
    for name in _speedups._HOT:
        pure = importlib.import_module(f"lgembed._{name}_py")
        compiled = importlib.import_module(f"lgembed._{name}_c")
        assert isinstance(pure.__all__, tuple)
        assert compiled.__all__ == pure.__all__


def test_current_process_selection():
    """§B: IMPLEMENTATION matches the classes re-exported by _speedups."""
    assert _speedups.IMPLEMENTATION in ("c", "py")
    assert _speedups.LastValue.__module__ == f"lgembed._channels_{_speedups.IMPLEMENTATION}"
    if _speedups.MODE == "off":
        assert _speedups.IMPLEMENTATION == "py"
    if _speedups.MODE == "required":
        assert _speedups.IMPLEMENTATION == "c"


def test_import_is_light():
    """§H: importing _speedups (and lgembed.channels) loads no serializer, database or asyncio."""
    code = (
        "import lgembed._speedups, lgembed.channels; "
        "heavy = ('msgpack', 'lmdb', 'asyncio', 'importlib.metadata', 'serial', 'can', 'periphery'); "
        "print(sorted(m for m in heavy if m in sys.modules))"
    )
    for mode in ("auto", "off"):
        proc = run_python(code, mode)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.strip() == "[]"


# --- engine modules compiled in place (lgembed/_engine.py) -------------------------------

ENGINE_PROBE = (
    "import importlib, importlib.machinery as m, lgembed.graph, lgembed._engine as e; "
    "ext = tuple(m.EXTENSION_SUFFIXES); "
    "print(','.join(sorted({'c' if importlib.import_module(n).__file__.endswith(ext) else 'py' for n in e.ENGINE})))"
)


def engine_builds(mode: str, root: Path = REPO) -> str:
    """The builds the engine modules loaded from: "c", "py", or "c,py" when mixed."""
    proc = run_python(ENGINE_PROBE, mode, root)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


def engine_files() -> list[Path]:
    """The extension files of every engine module, or a skip (a failure under required)."""
    from lgembed import _engine

    files = []
    for name in _engine.ENGINE:
        found = _engine._extension(name)
        if found is None:
            if _speedups.MODE == "required":
                pytest.fail(f"LGEMBED_EXTENSIONS=required but {name} is not built")
            pytest.skip(f"{name} is not built")
        files.append(Path(found))
    return files


def test_setup_engine_equals_engine():
    """§B: setup.py compiles exactly `_engine.ENGINE` (read without running setup())."""
    from lgembed import _engine

    namespace = runpy.run_path(str(REPO / "setup.py"), run_name="lgembed_setup_under_test")
    assert namespace["ENGINE"] == _engine.ENGINE


@pytest.mark.parametrize(("mode", "want"), [("off", "py"), ("required", "c"), ("auto", "c")])
def test_engine_follows_the_mode(mode, want):
    """§B: all engine modules load from the build LGEMBED_EXTENSIONS selects, never mixed."""
    engine_files()
    compiled_files()
    assert engine_builds(mode) == want


@pytest.mark.parametrize(
    ("edited", "module"),
    [("_node.py", "lgembed.pregel._node"), ("_loop.pxd", "lgembed.pregel._loop")],
)
def test_engine_stale_source_is_never_shadowed(tmp_path, edited, module):
    """§B: a source (or the augmenting .pxd that types it) edited after its build wins:
    auto uses the sources for every engine module, required refuses and names the stale one."""
    engine_files()
    root = tmp_path
    shutil.copytree(PACKAGE, root / "lgembed", ignore=shutil.ignore_patterns("__pycache__"))
    path = root / "lgembed" / "pregel" / edited
    assert path.exists()
    stem = edited.split(".")[0]
    built = next(p for p in path.parent.glob(f"{stem}.*") if p.name.endswith(EXTENSION_SUFFIXES))
    later = built.stat().st_mtime + 60
    os.utime(path, (later, later))
    assert engine_builds("auto", root) == "py"
    proc = run_python(ENGINE_PROBE, "required", root)
    assert proc.returncode != 0
    assert f"{module} (source newer than its build)" in proc.stderr


def test_engine_missing_build_and_pure_kernels(tmp_path):
    """§B: one engine module not built, or the hot kernels pure: auto uses the sources."""
    engine_files()
    compiled_files()
    root = tmp_path / "a"
    shutil.copytree(PACKAGE, root / "lgembed", ignore=shutil.ignore_patterns("__pycache__"))
    for path in (root / "lgembed" / "pregel").glob("_loop.*"):
        if path.name.endswith(EXTENSION_SUFFIXES):
            path.unlink()
    assert engine_builds("auto", root) == "py"
    proc = run_python(ENGINE_PROBE, "required", root)
    assert "lgembed.pregel._loop (not built)" in proc.stderr
    pure_kernels = copy_package(tmp_path / "b", drop=_speedups._HOT)
    assert engine_builds("auto", pure_kernels) == "py"


@pytest.mark.parametrize("mode", ["off", "required"])
def test_version_reports_both_builds(mode):
    """§B: `python -m lgembed --version` names the hot-kernel and the engine build in use."""
    if mode == "required":
        engine_files()
        compiled_files()
    env = {k: v for k, v in os.environ.items() if k != "LGEMBED_EXTENSIONS"}
    env["LGEMBED_EXTENSIONS"] = mode
    proc = subprocess.run(
        [sys.executable, "-m", "lgembed", "--version"], env=env, cwd=REPO, capture_output=True, text=True, timeout=60
    )
    kind = "py" if mode == "off" else "c"
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == f"lgembed 0.1.0 ({kind} build, engine {kind}, LGEMBED_EXTENSIONS={mode})"


def test_source_only_modules_ignore_a_build_beside_them(tmp_path):
    """§B: `_engine.SOURCE_ONLY` modules load from source in every mode, even when an
    extension file of their name lies beside them (here a renamed copy of another
    module's build, which could not even be imported as this module)."""
    from lgembed import _engine

    built = engine_files()
    root = tmp_path
    shutil.copytree(PACKAGE, root / "lgembed", ignore=shutil.ignore_patterns("__pycache__"))
    suffix = next(s for s in EXTENSION_SUFFIXES if built[0].name.endswith(s))
    for name in _engine.SOURCE_ONLY:
        target = root / Path(*name.split(".")).with_suffix("")
        shutil.copy(root / "lgembed" / built[0].relative_to(PACKAGE), str(target) + suffix)
    code = (
        "import importlib, lgembed.graph, lgembed._engine as e; "
        "print(','.join(importlib.import_module(n).__file__.rsplit('.', 1)[-1] for n in e.SOURCE_ONLY))"
    )
    for mode in ("auto", "required", "off"):
        proc = run_python(code, mode, root)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.strip() == ",".join("py" for _ in _engine.SOURCE_ONLY)
