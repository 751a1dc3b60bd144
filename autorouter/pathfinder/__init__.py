"""PathFinder: what to route (nets.py), occupancy (congestion.py), move costs (costs.py), negotiation (router.py;
branches.py: what a large net keeps when it is routed again), and what negotiation leaves (finishing.py)."""
from .congestion import NetRoute, Occupancy
from .nets import NetTask, build_tasks
from .finishing import make_room, reconnect
from .router import Negotiation, negotiate

__all__ = ["NetRoute", "NetTask", "Negotiation", "Occupancy", "build_tasks", "make_room", "negotiate",
           "reconnect"]
