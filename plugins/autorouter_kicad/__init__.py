"""KiCad action plugin (SWIG, KiCad 6 to 9): Tools > External Plugins > Autoroute (autorouter).

KiCad's own Python usually lacks CuPy, shapely and kiutils, so the plugin does not import the router: it asks for the
options (nets, time limit, engine), saves the board as it is in the editor (unsaved edits included) to a temporary
folder with its project files, runs the installed `autorouter route ... --json --events` in a subprocess, shows its
progress with a Cancel button and then its summary, and adds the new tracks and vias to the open board. KiCad
records a plugin's changes as one undoable step, and the board is saved as usual.

KiCad 9 and 10 have the IPC API plugin (plugins/autorouter_ipc) for the same work; `autorouter plugin install`
picks the one that fits the KiCad it finds.
"""
from __future__ import annotations

import os

try:
    import pcbnew
except ImportError:          # imported outside KiCad (by `autorouter plugin install`, or for its tests)
    pcbnew = None

from .action import route_board  # noqa: F401
from .runner import ENGINES, ConsoleUI, RouteOptions  # noqa: F401

ICON = os.path.join(os.path.dirname(__file__), "icon.png")

if pcbnew is not None:
    class AutorouterAction(pcbnew.ActionPlugin):
        def defaults(self):
            self.name = "Autoroute (autorouter)"
            self.category = "Routing"
            self.description = "Route the board's unrouted nets with autorouter (GPU or CPU)"
            self.show_toolbar_button = True
            self.icon_file_name = ICON

        def Run(self):
            import wx
            from .dialog import WxUI, ask_options
            board = pcbnew.GetBoard()
            parent = wx.FindWindowByName("PcbFrame")
            names = [n for n in board.GetNetsByName().keys() if str(n)]
            options = ask_options([str(n) for n in names], RouteOptions.parse, ENGINES, parent)
            if options is None:
                return
            ui = WxUI(parent)
            try:
                route_board(board, ui, options)
            finally:
                ui.close()
            pcbnew.Refresh()

    try:
        AutorouterAction().register()
    except Exception:        # pcbnew without its editor frame (a headless script) has nowhere to register
        pass
