"""KiCad IPC API plugin (KiCad 9 and 10): plugin.json, requirements.txt, the icons and autoroute.py, its entry
script. A package only so that it ships in the wheel for `autorouter plugin install`; KiCad runs autoroute.py as a
script, with runner.py and dialog.py (from autorouter_kicad) copied beside it at install."""
