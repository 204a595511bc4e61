"""The benchmark's agent with meaning beside the words (the semantic layer's settings for people,
with the benchmark's narrow list), to measure product vectors on generated session sets:

    SHOPCOPILOT_DENSE=1 PYTHONPATH=benchmarks shopcopilot eval --agent meaning_agent:MeaningAgent \\
        --generate long_tail:200 --seed 1 --protocol natural -o runs/long_tail-meaning
"""

from __future__ import annotations

import dataclasses

from shopcopilot.agent import FOR_PEOPLE, Agent, AgentSettings
from shopcopilot.rank import RankWeights

# Meaning alone: not the people's held requirements or vague-shopper spread (rank/hard.py,
# rank/spread.py), which change the list for other reasons.
WITH_MEANING = dataclasses.replace(
    AgentSettings(),
    retrieval=FOR_PEOPLE.retrieval,
    ranking=RankWeights(semantic=FOR_PEOPLE.ranking.semantic),
)


class MeaningAgent(Agent):
    def __init__(self, catalog_path=None, **options) -> None:
        super().__init__(catalog_path, settings=WITH_MEANING, **options)
