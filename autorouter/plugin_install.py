"""`autorouter plugin install`: copy a KiCad plugin into KiCad's folder for its kind, with a note of how to run this
very installation of the router, so KiCad finds it even when its PATH does not hold this environment.

Two kinds, shipped in the wheel as packages beside `autorouter`:
- `ipc` (plugins/autorouter_ipc): an IPC API plugin for KiCad 9 and 10, run by KiCad in its own Python environment;
  it goes to KiCad's user plugin folder, `<documents>/kicad/<version>/plugins`.
- `swig` (plugins/autorouter_kicad): a pcbnew ActionPlugin for KiCad 6 to 9, run inside KiCad's own Python; it goes
  to the third-party folder, `$KICADn_3RD_PARTY/plugins`.
`auto` picks the IPC plugin for KiCad 10, and for KiCad 9 when its API server is on; the SWIG plugin otherwise.
"""
from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from .cli import UsageError

PACKAGES = {"ipc": "autorouter_ipc", "swig": "autorouter_kicad"}
KINDS = ("auto", "ipc", "swig")
SHARED = ("runner.py", "dialog.py")              # the SWIG package's wx- and pcbnew-free parts the IPC plugin uses
KICAD_VERSIONS = ("10.0", "9.0", "8.0", "7.0", "6.0")
FIRST_IPC_VERSION = 9                            # KiCad 9 has the IPC API; 10 drops SWIG action plugins
ENABLE_API = "in KiCad, Preferences > Plugins > Enable KiCad API, then restart KiCad"


@dataclass
class KiCadFound:
    version: str | None                           # "9.0": the newest KiCad found; None when none was
    api_enabled: bool                             # its kicad_common.json has "api": {"enable_server": true}


@dataclass
class Installed:
    kind: str                                     # "ipc" or "swig"
    path: Path                                    # the plugin's folder
    notes: list[str] = field(default_factory=list)   # what the user should know or do next, one sentence each


def plugin_source(kind: str) -> Path:
    package = PACKAGES[kind]
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise UsageError(f"the {package} package is missing from this installation (reinstall autorouter)")
    return Path(list(spec.submodule_search_locations)[0])


def documents_dir(env=os.environ, home: Path | None = None, platform: str = sys.platform) -> Path:
    """KiCad's per-user documents folder, without the version: $KICAD_DOCUMENTS_HOME/kicad, else the platform's
    documents folder (on Linux, KiCad's choice is the data folder, ~/.local/share)."""
    home = home or Path.home()
    name = "kicad" if platform.startswith("linux") else "KiCad"
    if env.get("KICAD_DOCUMENTS_HOME"):
        return Path(env["KICAD_DOCUMENTS_HOME"]) / name
    if platform.startswith("win"):
        return Path(env.get("USERPROFILE", home)) / "Documents" / name
    if platform == "darwin":
        return home / "Documents" / name
    return Path(env.get("XDG_DATA_HOME", home / ".local" / "share")) / name


def config_dir(env=os.environ, home: Path | None = None, platform: str = sys.platform) -> Path:
    """KiCad's settings folder, without the version."""
    home = home or Path.home()
    if env.get("KICAD_CONFIG_HOME"):
        return Path(env["KICAD_CONFIG_HOME"])
    if platform.startswith("win"):
        return Path(env.get("APPDATA", home / "AppData" / "Roaming")) / "kicad"
    if platform == "darwin":
        return home / "Library" / "Preferences" / "kicad"
    return Path(env.get("XDG_CONFIG_HOME", home / ".config")) / "kicad"


def kicad_cli_version() -> str | None:
    """The "major.minor" of the kicad-cli on the PATH, if any."""
    cli = shutil.which("kicad-cli")
    if not cli:
        return None
    try:
        out = subprocess.run([cli, "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    m = re.match(r"\s*(\d+)\.(\d+)", out)
    return f"{m.group(1)}.{m.group(2)}" if m else None


def find_kicad(env=os.environ, home: Path | None = None, platform: str = sys.platform,
               cli_version=kicad_cli_version) -> KiCadFound:
    """The newest KiCad this user has: a settings or documents folder of its version, or the kicad-cli on the
    PATH; and whether its API server is on."""
    found = {v for v in KICAD_VERSIONS
             if (config_dir(env, home, platform) / v).is_dir() or (documents_dir(env, home, platform) / v).is_dir()}
    cli = cli_version()
    if cli:
        found.add(cli)
    if not found:
        return KiCadFound(None, False)
    version = max(found, key=lambda v: tuple(int(p) for p in v.split(".")))
    settings = config_dir(env, home, platform) / version / "kicad_common.json"
    try:
        enabled = json.loads(settings.read_text()).get("api", {}).get("enable_server") is True
    except (OSError, ValueError, AttributeError):
        enabled = False
    return KiCadFound(version, enabled)


def choose_kind(found: KiCadFound) -> str:
    if found.version is None:
        return "swig"
    major = int(found.version.split(".")[0])
    return "ipc" if major > FIRST_IPC_VERSION or (major == FIRST_IPC_VERSION and found.api_enabled) else "swig"


def swig_plugin_dir(env=os.environ, home: Path | None = None, platform: str = sys.platform,
                    version: str | None = None) -> Path:
    """KiCad's third-party plugin folder: $KICADn_3RD_PARTY/plugins for the newest KiCad that sets one, else the
    per-user default of `version` (or of the newest KiCad whose folder exists; KiCad 9's when none does)."""
    for v in KICAD_VERSIONS:
        major = v.split(".")[0]
        if env.get(f"KICAD{major}_3RD_PARTY") and version in (None, v):
            return Path(env[f"KICAD{major}_3RD_PARTY"]) / "plugins"
    return versioned(documents_dir(env, home, platform), version) / "3rdparty" / "plugins"


def ipc_plugin_dir(env=os.environ, home: Path | None = None, platform: str = sys.platform,
                   version: str | None = None) -> Path:
    """KiCad's user plugin folder, where it looks for IPC plugins (plugin.json) besides the third-party one."""
    return versioned(documents_dir(env, home, platform), version) / "plugins"


def versioned(base: Path, version: str | None) -> Path:
    if version:
        return base / version
    found = [v for v in KICAD_VERSIONS if (base / v).is_dir()]
    return base / (found[0] if found else "9.0")


def install(target: str | Path | None = None, kind: str = "auto", kicad: KiCadFound | None = None) -> Installed:
    """Install the plugin of `kind` (auto: the one that fits the KiCad found) into `target`, or into KiCad's folder
    for that kind."""
    if kind not in KINDS:
        raise UsageError(f"plugin kind must be one of {', '.join(KINDS)}, not {kind!r}")
    kicad = kicad or find_kicad()
    chosen = choose_kind(kicad) if kind == "auto" else kind
    if target:
        folder = Path(target)
    else:
        where = ipc_plugin_dir if chosen == "ipc" else swig_plugin_dir
        folder = where(version=kicad.version)
    dest = folder / PACKAGES[chosen]
    try:
        folder.mkdir(parents=True, exist_ok=True)
        if dest.exists():
            shutil.rmtree(dest)
        shutil.copytree(plugin_source(chosen), dest,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "installed.json"))
        if chosen == "ipc":
            (dest / "__init__.py").unlink(missing_ok=True)      # only there to ship in the wheel; not a package here
            for name in SHARED:
                shutil.copy(plugin_source("swig") / name, dest / name)
        (dest / "installed.json").write_text(json.dumps({"command": [sys.executable, "-m", "autorouter"]}) + "\n")
    except OSError as e:
        raise UsageError(f"cannot install the plugin in {folder}: {e.strerror or e}") from None
    return Installed(chosen, dest, notes(chosen, kind, kicad))


def notes(chosen: str, asked: str, kicad: KiCadFound) -> list[str]:
    major = int(kicad.version.split(".")[0]) if kicad.version else None
    said = []
    if asked == "auto":
        said.append(f"found {'KiCad ' + kicad.version if kicad.version else 'no KiCad'}: the {chosen.upper()} "
                    "plugin fits it")
    if chosen == "swig" and major is not None and major > FIRST_IPC_VERSION:
        said.append(f"KiCad {kicad.version} does not run SWIG action plugins: install with --kind ipc")
    elif chosen == "swig" and major == FIRST_IPC_VERSION:
        said.append(f"KiCad {kicad.version} also runs the IPC plugin once its API is on: {ENABLE_API}; then run "
                    "`autorouter plugin install --kind ipc`")
    if chosen == "ipc" and not kicad.api_enabled:
        said.append(f"the IPC plugin needs KiCad's API: {ENABLE_API}")
    if chosen == "ipc":
        said.append("restart KiCad's PCB editor: KiCad builds the plugin's Python environment (kicad-python, from "
                    "PyPI) and adds the toolbar button Autoroute (autorouter)")
    else:
        said.append("restart KiCad's PCB editor (or Tools > External Plugins > Refresh Plugins); then Tools > "
                    "External Plugins > Autoroute (autorouter)")
    return said


__all__ = ["Installed", "KiCadFound", "choose_kind", "find_kicad", "install", "ipc_plugin_dir", "plugin_source",
           "swig_plugin_dir"]
