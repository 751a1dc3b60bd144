"""Copper zones: what KiCad's refill will connect once the user presses B, and what routing must leave alone."""
from .fill import Piece, predict, spoke_guards, spokes

__all__ = ["Piece", "predict", "spoke_guards", "spokes"]
