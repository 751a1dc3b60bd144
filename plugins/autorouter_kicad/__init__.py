"""KiCad action plugin: Tools > External Plugins > Autoroute (autorouter).

KiCad's own Python usually lacks CuPy, shapely and kiutils, so the plugin does not import the router: it saves the
board as it is in the editor (unsaved edits included) to a temporary folder with its project file, runs the installed
`autorouter route ... --json --events` in a subprocess, shows its progress and summary, and adds the new tracks and
vias to the open board. KiCad records a plugin's changes as one undoable step, and the board is saved as usual.
"""
from __future__ import annotations

import os

try:
    import pcbnew
except ImportError:          # imported outside KiCad (by `autorouter plugin install`, or for its tests)
    pcbnew = None

from .action import ConsoleUI, route_board  # noqa: F401

if pcbnew is not None:
    class AutorouterAction(pcbnew.ActionPlugin):
        def defaults(self):
            self.name = "Autoroute (autorouter)"
            self.category = "Routing"
            self.description = "Route the board's unrouted nets with autorouter (GPU or CPU)"
            self.show_toolbar_button = True
            icon = os.path.join(os.path.dirname(__file__), "icon.png")
            self.icon_file_name = icon if os.path.exists(icon) else ""

        def Run(self):
            from .dialog import WxUI
            board = pcbnew.GetBoard()
            ui = WxUI()
            try:
                route_board(board, ui)
            finally:
                ui.close()
            pcbnew.Refresh()

    try:
        AutorouterAction().register()
    except Exception:        # pcbnew without its editor frame (a headless script) has nowhere to register
        pass
