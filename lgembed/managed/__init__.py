"""Managed values: state fields computed by the engine for each task (B-3, L-25)."""

from __future__ import annotations

from typing import Annotated, Any

__all__ = ("ManagedValue", "IsLastStep", "RemainingSteps", "is_managed_value")


class ManagedValue:
    """Base of values computed per task from the run's step counters."""

    @staticmethod
    def get(step: int, stop: int) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError


class IsLastStepManager(ManagedValue):
    @staticmethod
    def get(step: int, stop: int) -> bool:
        return step == stop - 1


class RemainingStepsManager(ManagedValue):
    @staticmethod
    def get(step: int, stop: int) -> int:
        return stop - step


IsLastStep = Annotated[bool, IsLastStepManager]
"""True in the last step the recursion limit allows."""
RemainingSteps = Annotated[int, RemainingStepsManager]
"""Steps left before the recursion limit is reached."""


def is_managed_value(value: Any) -> bool:
    return isinstance(value, type) and issubclass(value, ManagedValue)
