"""Drop-in package for the official TechJam evaluator (`from starter.agent import Agent`)."""
