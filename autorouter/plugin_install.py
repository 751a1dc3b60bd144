"""`autorouter plugin install`: copy the KiCad action plugin (plugins/autorouter_kicad, shipped in the wheel as the
package autorouter_kicad) into KiCad's plugin folder, with a note of how to run this very installation of the router,
so KiCad finds it even when its PATH does not hold this environment."""
from __future__ import annotations

import importlib.util
import json
import os
import shutil
import sys
from pathlib import Path

from .cli import UsageError

PLUGIN = "autorouter_kicad"
KICAD_VERSIONS = ("10.0", "9.0", "8.0", "7.0", "6.0")


def plugin_source() -> Path:
    spec = importlib.util.find_spec(PLUGIN)
    if spec is None or not spec.submodule_search_locations:
        raise UsageError(f"the {PLUGIN} package is missing from this installation (reinstall autorouter)")
    return Path(list(spec.submodule_search_locations)[0])


def kicad_plugin_dir(env=os.environ, home: Path | None = None, platform: str = sys.platform) -> Path:
    """KiCad's third-party plugin folder: $KICADn_3RD_PARTY/plugins for the newest KiCad that sets one, else the
    per-user default of the newest KiCad found (KiCad 9's when none is)."""
    for version in KICAD_VERSIONS:
        major = version.split(".")[0]
        if env.get(f"KICAD{major}_3RD_PARTY"):
            return Path(env[f"KICAD{major}_3RD_PARTY"]) / "plugins"
    home = home or Path.home()
    if platform.startswith("win"):
        base = Path(env.get("USERPROFILE", home)) / "Documents" / "KiCad"
    elif platform == "darwin":
        base = home / "Documents" / "KiCad"
    else:
        base = Path(env.get("XDG_DATA_HOME", home / ".local" / "share")) / "kicad"
    found = [v for v in KICAD_VERSIONS if (base / v).is_dir()]
    return base / (found[0] if found else "9.0") / "3rdparty" / "plugins"


def install(target: str | Path | None = None) -> Path:
    folder = Path(target) if target else kicad_plugin_dir()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        dest = folder / PLUGIN
        if dest.exists():
            shutil.rmtree(dest)
        shutil.copytree(plugin_source(), dest, ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "installed.json"))
        (dest / "installed.json").write_text(json.dumps({"command": [sys.executable, "-m", "autorouter"]}) + "\n")
    except OSError as e:
        raise UsageError(f"cannot install the plugin in {folder}: {e.strerror or e}") from None
    return dest


__all__ = ["install", "kicad_plugin_dir", "plugin_source"]
