"""Detail routing: the joins the lattice leaves, searched in exact geometry on a fine grid (joins)."""
from .joins import detail_join

__all__ = ["detail_join"]
