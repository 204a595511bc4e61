"""Rerank stage: order candidates by evidence and explain each choice."""

from .rerank import RankWeights, Scored, reason, rerank
from .view import ProductView, ViewCache, build_view

__all__ = ["ProductView", "RankWeights", "Scored", "ViewCache", "build_view", "reason", "rerank"]
