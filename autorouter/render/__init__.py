"""Pictures of a board: `render` writes a PNG or SVG of its copper, vias, outline and airwires."""
from __future__ import annotations

from pathlib import Path

from .scene import Scene, build_scene


def render(board, path, new_tracks=(), new_vias=(), width: int = 1600, svg: bool | None = None, pieces=()) -> Path:
    """Write a picture of the board (plus new tracks and vias) to path: SVG when svg is set or the name ends in
    .svg, else PNG. Written atomically, like boards. pieces: the zone fills, which join pads without airwires."""
    from ..writeback import write_atomic
    from . import png, svg as svg_writer
    path = Path(path)
    scene = build_scene(board, new_tracks, new_vias, pieces)
    if svg or (svg is None and path.suffix.lower() == ".svg"):
        write_atomic(path, svg_writer.draw(scene, width))
    else:
        write_atomic(path, png.encode_png(png.draw(scene, width)))
    return path


__all__ = ["Scene", "build_scene", "render"]
