"""Detail routing: the joins the lattice leaves, searched in exact geometry on a fine grid (joins), and through other
nets' new copper, which then moves out of the way (through)."""
from .joins import detail_join
from .through import join_apart, join_through

__all__ = ["detail_join", "join_apart", "join_through"]
