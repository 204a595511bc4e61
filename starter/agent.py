# The official evaluator does `from starter.agent import Agent; Agent(catalog_path)`.
from shopcopilot.agent import Agent  # noqa: F401
