"""PathFinder: what to route (nets.py), occupancy (congestion.py), move costs (costs.py), negotiation (router.py)."""
from .congestion import NetRoute, Occupancy
from .nets import NetTask, build_tasks
from .router import Negotiation, negotiate, reconnect

__all__ = ["NetRoute", "NetTask", "Negotiation", "Occupancy", "build_tasks", "negotiate", "reconnect"]
