"""Rerank stage: order candidates by evidence and explain each choice."""

from .features import FeatureStore, load_or_build
from .rerank import RankWeights, Scored, reason, rerank

__all__ = ["FeatureStore", "RankWeights", "Scored", "load_or_build", "reason", "rerank"]
