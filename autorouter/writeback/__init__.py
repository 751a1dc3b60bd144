"""Write-back: lattice routes to tracks and vias (tracks.py), inserted into the original file text (writer.py)."""
from .tracks import routes_to_items
from .writer import with_items, write_atomic

__all__ = ["routes_to_items", "with_items", "write_atomic"]
