"""Rerank stage: order candidates by evidence and explain each choice."""

from .rerank import Ranking, RankWeights, Scored, reason, rerank

__all__ = ["RankWeights", "Ranking", "Scored", "reason", "rerank"]
