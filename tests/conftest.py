"""Shared fixtures and options of the test suite.

Kernel tests take the `impl` fixture and run once per build of the hot paths (docs/STYLE.md
§C): `impl` is `lgembed._engine.load("c")` or `load("py")`, so tests write
`impl.LastValue(...)`. A missing compiled build skips the `c` run, except under
`LGEMBED_EXTENSIONS=required`, where it fails.
"""

from __future__ import annotations

import types

import pytest

from lgembed import _engine

# --- options and markers ------------------------------------------------------------


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--no-c-extensions",
        action="store_true",
        default=False,
        help="skip the tests of the compiled build (the `c` runs of `impl`)",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "c_extension: runs against the compiled (Cython) build of the hot paths"
    )


# --- both builds of the hot paths -----------------------------------------------------


def _load_impl(kind: str, config: pytest.Config) -> types.SimpleNamespace:
    """`_engine.load(kind)`, or a skip when the compiled modules are not built
    (a failure under LGEMBED_EXTENSIONS=required, and for a broken build)."""
    if kind == "c" and config.getoption("--no-c-extensions"):
        pytest.skip("--no-c-extensions")
    try:
        return _engine.load(kind)
    except ModuleNotFoundError as e:
        # not built: skip, unless the run demands the compiled build
        if kind == "c" and _engine.MODE != "required":
            pytest.skip(f"compiled build not available: {e}")
        raise
    # any other ImportError (a broken or stale build) fails the test


@pytest.fixture(
    scope="session",
    params=[pytest.param("c", marks=pytest.mark.c_extension), "py"],
    ids=["c", "py"],
)
def impl(request: pytest.FixtureRequest) -> types.SimpleNamespace:
    """One build of the hot modules: a namespace of their public names."""
    return _load_impl(request.param, request.config)


@pytest.fixture(scope="session")
def impl_c_py(request: pytest.FixtureRequest) -> tuple[types.SimpleNamespace, types.SimpleNamespace]:
    """Both builds at once, `(c, py)`, for differential tests; skipped like `impl[c]`."""
    return _load_impl("c", request.config), _load_impl("py", request.config)
