"""State stage: the shopper model and the rules that update it from a message."""

from .lexicon import Lexicon
from .model import Constraint, Fragment, Rejection, ShoppingState, StateDiff
from .update import update

__all__ = ["Constraint", "Fragment", "Lexicon", "Rejection", "ShoppingState", "StateDiff", "update"]
