"""The KiCad action plugin: `autorouter plugin install` puts it where KiCad looks, and KiCad 9's own Python (pcbnew,
headless) loads it and runs its action on a stripped demo board: the board gains tracks and vias, and KiCad's DRC
finds every connection made and no new error."""
import json
import subprocess
from pathlib import Path

import pytest

from autorouter.cli import main
from autorouter.plugin_install import kicad_plugin_dir
from conftest import needs_judge, needs_kicad
from test_end_to_end import judge

KICAD_PYTHON = "/usr/bin/python3"          # the interpreter KiCad's pcbnew module is built for (Debian)

RUN_THE_ACTION = """
import json, sys
sys.path.insert(0, sys.argv[1])
import pcbnew
import autorouter_kicad as plugin
board = pcbnew.LoadBoard(sys.argv[2])
before = len(board.GetTracks())
action = plugin.AutorouterAction()
action.defaults()
info = plugin.route_board(board, plugin.ConsoleUI())
pcbnew.PCB_IO_MGR.Save(pcbnew.PCB_IO_MGR.KICAD_SEXP, sys.argv[3], board)
print(json.dumps({"name": action.name, "before": before, "after": len(board.GetTracks()), "summary": info}))
"""


def test_plugin_folder_follows_kicad(tmp_path):
    assert kicad_plugin_dir({"KICAD9_3RD_PARTY": "/opt/k9"}) == Path("/opt/k9/plugins")
    assert kicad_plugin_dir({"KICAD8_3RD_PARTY": "/k8", "KICAD9_3RD_PARTY": "/k9"}) == Path("/k9/plugins")
    (tmp_path / ".local/share/kicad/8.0").mkdir(parents=True)
    assert kicad_plugin_dir({}, tmp_path, "linux") == tmp_path / ".local/share/kicad/8.0/3rdparty/plugins"
    assert kicad_plugin_dir({}, tmp_path, "darwin") == tmp_path / "Documents/KiCad/9.0/3rdparty/plugins"


def test_install_is_one_command(tmp_path, capsys):
    assert main(["plugin", "install", "--dir", str(tmp_path)]) == 0
    installed = tmp_path / "autorouter_kicad"
    assert {"__init__.py", "action.py", "dialog.py", "installed.json"} <= {p.name for p in installed.iterdir()}
    command = json.loads((installed / "installed.json").read_text())["command"]
    assert subprocess.run([*command, "--version"], capture_output=True, text=True).stdout.startswith("autorouter")


@needs_kicad
@needs_judge
@pytest.mark.kicad
def test_kicad_runs_the_plugin_headless_on_a_demo_board(tmp_path):
    j = judge()
    _, src, _ = j.resolve("ecc83-pp", str(tmp_path))
    board, routed = tmp_path / "board.kicad_pcb", tmp_path / "routed.kicad_pcb"
    j.strip(src, str(board))
    j.copy_project(str(src), str(board))                # the plugin hands the project's rules to the router
    assert main(["plugin", "install", "--dir", str(tmp_path / "plugins")]) == 0
    proc = subprocess.run([KICAD_PYTHON, "-c", RUN_THE_ACTION, str(tmp_path / "plugins"), str(board), str(routed)],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["name"] == "Autoroute (autorouter)"
    assert result["before"] == 0 and result["after"] > 0
    summary = result["summary"]
    assert summary["connections_routed"] == summary["connections"] > 0
    assert "connections routed" in proc.stdout                     # the summary the dialog shows
    j.copy_project(str(board), str(routed))
    before, after = j.drc(str(board)), j.drc(str(routed))
    assert before["unconnected"] > 0 and after["unconnected"] == 0
    added = {k: n - before["violations_by_type"].get(k, 0) for k, n in after["violations_by_type"].items()}
    assert not {k: n for k, n in added.items() if n > 0}
