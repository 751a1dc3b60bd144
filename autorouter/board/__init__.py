"""Reading a KiCad board: the typed model, its geometry, and the design rules."""
from .model import Board, CopperGraphic, Keepout, Net, Pad, Track, Via
from .reader import BoardError, load_board

__all__ = ["Board", "BoardError", "CopperGraphic", "Keepout", "Net", "Pad", "Track", "Via", "load_board"]
