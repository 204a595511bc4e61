"""Rerank stage: order candidates by evidence and explain each choice."""

from .features import FeatureStore, load_or_build
from .rerank import RankWeights, Ranking, Scored, reason, rerank

__all__ = ["FeatureStore", "RankWeights", "Ranking", "Scored", "load_or_build", "reason", "rerank"]
