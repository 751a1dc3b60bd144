"""Copper zones: what KiCad's refill will connect once the user presses B, and what routing must leave alone."""
from .fill import Piece, predict, relief_fill, spoke_guards, spokes, starting_fills
from .thermals import Relief, feed_starved, relief_room, reliefs, starved_keys, stitch_islands

__all__ = ["Piece", "Relief", "feed_starved", "predict", "relief_fill", "relief_room", "reliefs",
           "spoke_guards", "spokes", "starved_keys", "starting_fills", "stitch_islands"]
