"""Reading a TOML file: the one reader behind the service config, the device file and the unit.

Why this module exists: three readers (`lgembed serve`'s config, the edge layer's device
file, `lgembed unit`) each chose the parser (tomllib on Python 3.11+, tomli on 3.10) and
worded the same three failures their own way. Here that is done once; a caller turns
`TomlError` into its own error class, keeping the text (`raise ConfigError(str(e), ...)`).
"""

from __future__ import annotations

import sys
from typing import Any

__all__ = ("TomlError", "load")


class TomlError(ValueError):
    """A TOML file cannot be read: `Reading {what} {path}: {problem}`.

    Attributes:
        path: the file.
        problem: what went wrong and how to fix it, without the "Reading ..." prefix.
        missing: True when the file does not exist.
    """

    def __init__(self, what: str, path: str, problem: str, missing: bool = False) -> None:
        super().__init__(f"Reading {what} {path}: {problem}")
        self.path = path
        self.problem = problem
        self.missing = missing


def load(path: str, what: str = "TOML file") -> dict[str, Any]:
    """The parsed content of the TOML file at `path`.

    Args:
        path: the file.
        what: what the file is, for the message ("service config", "device file").

    Raises:
        TomlError: the file is missing or unreadable, is not valid TOML, or (Python 3.10)
            the `tomli` package is not installed.
    """
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        try:
            import tomli as tomllib
        except ImportError as e:
            raise TomlError(what, path, "Python 3.10 needs the 'tomli' package. Fix: pip install tomli") from e
    try:
        with open(path, "rb") as f:
            return tomllib.load(f)
    except FileNotFoundError:
        raise TomlError(what, path, "no such file. Fix: pass the path of an existing TOML file", True) from None
    except OSError as e:
        raise TomlError(what, path, f"{e.strerror or e}") from e
    except tomllib.TOMLDecodeError as e:
        raise TomlError(what, path, f"invalid TOML: {e}") from e
