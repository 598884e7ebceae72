"""NamedBarrierValue and NamedBarrierValueAfterFinish, the join channels
(LangGraph's `langgraph.channels.named_barrier_value`; C-8, C-9)."""

from lgembed._channels import NamedBarrierValue, NamedBarrierValueAfterFinish

__all__ = ("NamedBarrierValue", "NamedBarrierValueAfterFinish")
