"""Dialogue stage: the one question to ask, how many products to show, the message."""

from .policy import Decision, DialogueSettings, decide

__all__ = ["Decision", "DialogueSettings", "decide"]
