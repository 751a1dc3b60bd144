"""Legality checked after routing by code independent of the router (exact geometry, not the lattice)."""
from .drc import CheckReport, Violation, check

__all__ = ["CheckReport", "Violation", "check"]
