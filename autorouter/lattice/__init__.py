"""The routing lattice: grid geometry, obstacles per net-class profile, and pad portals."""
from .grid import Lattice, choose_pitch, disc_offsets, make_lattice
from .obstacles import FREE, HARD, Obstacles, Profile, build_obstacles

__all__ = ["FREE", "HARD", "Lattice", "Obstacles", "Profile", "build_obstacles", "choose_pitch", "disc_offsets", "make_lattice"]
