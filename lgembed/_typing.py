"""Sentinels shared by the engine and the channels."""


class _Missing:
    """The type of MISSING: a value that is not there (not None, which is a value)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"

    def __bool__(self) -> bool:
        return False

    def __reduce__(self) -> str:
        return "MISSING"


MISSING = _Missing()
"""Returned by `BaseChannel.checkpoint()` when there is nothing to store."""
