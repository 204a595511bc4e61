"""Shopping Copilot: a conversational product-search agent."""

__version__ = "0.1.0"
