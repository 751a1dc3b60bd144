"""The plugins' windows inside KiCad (wx): the options asked before routing, a progress dialog with a Cancel
button while the router works, then its summary.

Shared by both plugins, like runner.py, and so without relative imports: the IPC plugin runs it in its own process
with wxPython from the Python that KiCad made its environment from (KiCad's own, which carries wxPython)."""
from __future__ import annotations

import wx

TITLE = "autorouter"


def ask_options(net_names, parse, engines, parent=None):
    """The routing options, or None if the user closes the dialog. `parse(nets, time_limit, engine)` turns the
    fields into options or raises ValueError, whose message is shown before asking again."""
    dialog = OptionsDialog(parent, sorted(net_names), engines)
    try:
        while dialog.ShowModal() == wx.ID_OK:
            try:
                return parse(*dialog.values())
            except ValueError as e:
                wx.MessageBox(str(e), f"{TITLE}: options", wx.OK | wx.ICON_WARNING, dialog)
        return None
    finally:
        dialog.Destroy()


class OptionsDialog(wx.Dialog):
    def __init__(self, parent, net_names: list[str], engines):
        super().__init__(parent, title=f"{TITLE}: route the board")
        self.nets = wx.TextCtrl(self, size=(360, -1))
        self.nets.SetHint("every net (or names, separated by commas)")
        self.nets.AutoComplete(net_names)
        self.time_limit = wx.TextCtrl(self)
        self.time_limit.SetHint("none")
        self.engine = wx.Choice(self, choices=list(engines))
        self.engine.SetSelection(0)
        grid = wx.FlexGridSizer(cols=2, vgap=8, hgap=8)
        grid.AddGrowableCol(1)
        for label, control in (("Nets:", self.nets), ("Time limit (s):", self.time_limit),
                               ("Engine:", self.engine)):
            grid.Add(wx.StaticText(self, label=label), 0, wx.ALIGN_CENTER_VERTICAL)
            grid.Add(control, 1, wx.EXPAND)
        note = wx.StaticText(self, label="The engine 'auto' uses the GPU when CuPy and a device are present.")
        box = wx.BoxSizer(wx.VERTICAL)
        box.Add(grid, 0, wx.EXPAND | wx.ALL, 12)
        box.Add(note, 0, wx.LEFT | wx.RIGHT, 12)
        box.Add(self.CreateStdDialogButtonSizer(wx.OK | wx.CANCEL), 0, wx.EXPAND | wx.ALL, 12)
        self.SetSizerAndFit(box)
        self.FindWindowById(wx.ID_OK).SetLabel("Route")

    def values(self) -> tuple[str, str, str]:
        return self.nets.GetValue(), self.time_limit.GetValue(), self.engine.GetStringSelection()


class WxUI:
    """Progress with a working Cancel: runner.run_router asks cancelled() several times a second, which also keeps
    the dialog responsive while the router thinks between two events."""

    def __init__(self, parent=None):
        self.dialog = wx.ProgressDialog(TITLE, "starting", maximum=100, parent=parent,
                                        style=wx.PD_APP_MODAL | wx.PD_ELAPSED_TIME | wx.PD_SMOOTH | wx.PD_CAN_ABORT)

    def progress(self, text: str) -> None:
        if self.dialog:
            self.dialog.Pulse(text)

    def cancelled(self) -> bool:
        if not self.dialog:
            return False
        keep_going, _ = self.dialog.Pulse()      # handles pending events, the Cancel button's click among them
        return not keep_going

    def done(self, text: str) -> None:
        self.close()
        wx.MessageBox(text, f"{TITLE}: done", wx.OK | wx.ICON_INFORMATION)

    def error(self, text: str) -> None:
        self.close()
        wx.MessageBox(text, f"{TITLE}: error", wx.OK | wx.ICON_ERROR)

    def close(self) -> None:
        if self.dialog:
            self.dialog.Destroy()
            self.dialog = None
