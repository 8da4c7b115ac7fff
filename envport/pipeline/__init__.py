"""The closed-loop driver: plan, generate module by module, check, repair, resume."""

from envport.targets.registry import TRANSLATE_TARGETS

__all__ = ["TRANSLATE_TARGETS"]
