"""The Pregel engine that runs compiled graphs."""

from lgembed.pregel.main import Pregel

__all__ = ("Pregel",)
