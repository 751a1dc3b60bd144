"""The plugin's window inside KiCad: a progress dialog while the router works, then its summary."""
from __future__ import annotations

import wx


class WxUI:
    def __init__(self):
        self.dialog = wx.ProgressDialog("autorouter", "starting", maximum=100,
                                        style=wx.PD_APP_MODAL | wx.PD_ELAPSED_TIME | wx.PD_SMOOTH)

    def progress(self, text: str) -> None:
        self.dialog.Pulse(text)
        wx.Yield()

    def done(self, text: str) -> None:
        self.close()
        wx.MessageBox(text, "autorouter: done", wx.OK | wx.ICON_INFORMATION)

    def error(self, text: str) -> None:
        self.close()
        wx.MessageBox(text, "autorouter: error", wx.OK | wx.ICON_ERROR)

    def close(self) -> None:
        if self.dialog:
            self.dialog.Destroy()
            self.dialog = None
