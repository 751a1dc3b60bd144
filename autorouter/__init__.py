"""autorouter: a GPU-accelerated PCB autorouter for KiCad boards."""
__version__ = "0.1.0"
