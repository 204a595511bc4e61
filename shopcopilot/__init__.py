"""Shopping Copilot: a conversational product-search agent."""

__version__ = "0.1.0"


def __getattr__(name: str):
    # `shopcopilot.Agent` without importing the whole pipeline on `import shopcopilot`.
    if name == "Agent":
        from .agent import Agent

        return Agent
    raise AttributeError(name)
