"""The agent with the settings a person gets (FOR_PEOPLE: the full list, meaning beside the words,
hard requirements held, a vague shopper's spread), to see what the simulators make of them:

    PYTHONPATH=benchmarks shopcopilot eval --agent people_agent:People \\
        --catalog PADDED --sessions ../shared/data/public_set.jsonl --protocol natural -o DIR
"""

from __future__ import annotations

from shopcopilot.agent import FOR_PEOPLE, Agent


class People(Agent):
    def __init__(self, catalog_path=None, **options) -> None:
        super().__init__(catalog_path, settings=FOR_PEOPLE, **options)
