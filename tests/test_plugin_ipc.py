"""The IPC API plugin (plugins/autorouter_ipc, KiCad 9 and 10), what it shares with the SWIG one (runner.py: options,
progress, cancel), and `autorouter plugin install` choosing between them.

Most tests need neither KiCad nor kipy. Those that build kipy objects skip without kicad-python (it is the plugin's
dependency, never the router's). The last test runs the plugin against a real KiCad 9 PCB editor, started under
Xvfb with its API server on, and checks the board it leaves with KiCad's own DRC."""
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

import generated
from autorouter.cli import main
from autorouter.plugin_install import KiCadFound, choose_kind, find_kicad, install, ipc_plugin_dir, swig_plugin_dir
from conftest import ROOT, needs_kicad
from headless_display import needs_xvfb, xvfb

sys.path[:0] = [str(ROOT / "plugins"), str(ROOT / "plugins" / "autorouter_ipc")]   # this checkout's plugins
import board_items  # noqa: E402
from autorouter_kicad.runner import Cancelled, RouteOptions, RouterFailed, run_router  # noqa: E402

# The router of this checkout (the plugin's subprocess drops PYTHONPATH, as KiCad's would mislead it).
ROUTER = [sys.executable, "-c", f"import sys; sys.path.insert(0, {str(ROOT)!r}); from autorouter.cli import main; "
                                "sys.exit(main())"]
KICAD_SCHEMA = Path("/usr/share/kicad/schemas/api.v1.schema.json")     # the schema KiCad 9 checks plugin.json with
has_kipy = importlib.util.find_spec("kipy") is not None
needs_kipy = pytest.mark.skipif(not has_kipy, reason="kicad-python (kipy) is not installed: pip install kicad-python")


class RecordingUI:
    """The plugin's UI face; cancels once `cancel_after` progress lines have arrived."""

    def __init__(self, cancel_after=None):
        self.lines, self.errors, self.finished, self.cancel_after = [], [], [], cancel_after

    def progress(self, text):
        self.lines.append(text)

    def cancelled(self):
        return self.cancel_after is not None and len(self.lines) >= self.cancel_after

    def done(self, text):
        self.finished.append(text)

    def error(self, text):
        self.errors.append(text)


@pytest.fixture(scope="module")
def channel(tmp_path_factory):
    """A small generated board and the router's summary and output for it."""
    folder = tmp_path_factory.mktemp("channel")
    board = generated.write(generated.channel(4), folder)
    out = folder / "routed.kicad_pcb"
    info = run_router(ROUTER, board, out, RouteOptions(engine="cpu"), RecordingUI())
    return board, out, info


# --- installing: which kind, and where ------------------------------------------------------------------------------

def test_install_ipc_plugin_with_dir(tmp_path):
    assert main(["plugin", "install", "--kind", "ipc", "--dir", str(tmp_path)]) == 0
    installed = tmp_path / "autorouter_ipc"
    names = {p.name for p in installed.iterdir()}
    assert {"plugin.json", "requirements.txt", "autoroute.py", "board_items.py", "runner.py", "dialog.py",
            "icon-24.png", "icon-48.png", "installed.json"} <= names
    assert "__init__.py" not in names                       # a plugin folder, not a package, once installed
    assert "kicad-python" in (installed / "requirements.txt").read_text()
    command = json.loads((installed / "installed.json").read_text())["command"]
    assert subprocess.run([*command, "--version"], capture_output=True, text=True).stdout.startswith("autorouter")
    proc = subprocess.run([sys.executable, str(installed / "autoroute.py"), "--help"], capture_output=True, text=True)
    assert proc.returncode == 0 and "--time-limit" in proc.stdout      # the installed script imports what it needs


def test_plugin_json_follows_kicads_schema(tmp_path):
    jsonschema = pytest.importorskip("jsonschema")
    install(tmp_path, "ipc", KiCadFound("9.0", True))
    folder = tmp_path / "autorouter_ipc"
    plugin = json.loads((folder / "plugin.json").read_text())
    if KICAD_SCHEMA.exists():
        schema = json.loads(KICAD_SCHEMA.read_text())
    elif has_kipy:
        from importlib.resources import files
        schema = json.loads(files("kipy.packaging.schemas").joinpath("api.v1.schema.json").read_text())
    else:
        pytest.skip("neither KiCad's nor kipy's copy of https://go.kicad.org/api/schemas/v1 is here")
    jsonschema.Draft7Validator(schema).validate(plugin)
    assert plugin["$schema"] == "https://go.kicad.org/api/schemas/v1"
    for action in plugin["actions"]:
        for name in [action["entrypoint"], *action["icons-light"], *action["icons-dark"]]:
            assert (folder / name).is_file(), name
    if has_kipy:                                             # kicad-python's own plugin checker agrees
        from kipy.packaging.validate import validate_plugin
        report = validate_plugin(folder)
        assert not [m for m in report.messages if m.level in ("error", "warning")], report.messages


@pytest.mark.slow
def test_the_package_carries_both_plugins(tmp_path):
    """`autorouter plugin install` copies from the installed package: both plugins must be in it, files and all."""
    site = tmp_path / "site"
    proc = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(site),
                           str(ROOT)], capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    for name in ("plugin.json", "requirements.txt", "icon-24.png", "icon-48.png", "autoroute.py", "board_items.py"):
        assert (site / "autorouter_ipc" / name).is_file(), name
    for name in ("runner.py", "dialog.py", "icon.png"):
        assert (site / "autorouter_kicad" / name).is_file(), name


@pytest.mark.parametrize("kicad, kind", [(KiCadFound("10.0", False), "ipc"), (KiCadFound("9.0", True), "ipc"),
                                         (KiCadFound("9.0", False), "swig"), (KiCadFound("8.0", False), "swig"),
                                         (KiCadFound(None, False), "swig")])
def test_auto_installs_the_plugin_that_fits(tmp_path, kicad, kind):
    done = install(tmp_path, "auto", kicad)
    assert done.kind == kind == choose_kind(kicad)
    assert (done.path / ("plugin.json" if kind == "ipc" else "__init__.py")).is_file()
    if kind == "ipc" and not kicad.api_enabled:
        assert any("Enable KiCad API" in note for note in done.notes)


def test_find_kicad_reads_versions_and_the_api_switch(tmp_path):
    env = {"XDG_CONFIG_HOME": str(tmp_path / "config"), "XDG_DATA_HOME": str(tmp_path / "data")}
    none = lambda: None                                      # noqa: E731  (no kicad-cli on the PATH)
    assert find_kicad(env, tmp_path, "linux", none) == KiCadFound(None, False)
    (tmp_path / "data/kicad/8.0").mkdir(parents=True)
    assert find_kicad(env, tmp_path, "linux", none) == KiCadFound("8.0", False)
    settings = tmp_path / "config/kicad/9.0/kicad_common.json"
    settings.parent.mkdir(parents=True)
    settings.write_text(json.dumps({"api": {"enable_server": False}}))
    assert find_kicad(env, tmp_path, "linux", none) == KiCadFound("9.0", False)
    settings.write_text(json.dumps({"api": {"enable_server": True, "interpreter_path": ""}}))
    assert find_kicad(env, tmp_path, "linux", none) == KiCadFound("9.0", True)
    assert find_kicad(env, tmp_path, "linux", lambda: "10.0") == KiCadFound("10.0", False)
    settings.write_text("{ not json")
    assert find_kicad(env, tmp_path, "linux", none) == KiCadFound("9.0", False)


def test_each_kind_goes_to_kicads_folder_for_it(tmp_path):
    assert ipc_plugin_dir({}, tmp_path, "linux", "9.0") == tmp_path / ".local/share/kicad/9.0/plugins"
    assert ipc_plugin_dir({}, tmp_path, "darwin", "10.0") == tmp_path / "Documents/KiCad/10.0/plugins"
    assert ipc_plugin_dir({"USERPROFILE": str(tmp_path)}, tmp_path, "win32", "9.0") == \
        tmp_path / "Documents/KiCad/9.0/plugins"
    assert ipc_plugin_dir({"KICAD_DOCUMENTS_HOME": "/d"}, tmp_path, "linux", "9.0") == Path("/d/kicad/9.0/plugins")
    assert swig_plugin_dir({}, tmp_path, "linux", "9.0") == tmp_path / ".local/share/kicad/9.0/3rdparty/plugins"
    assert swig_plugin_dir({"KICAD9_3RD_PARTY": "/k9"}, tmp_path, "linux", "9.0") == Path("/k9/plugins")


# --- options, progress and cancel (runner.py, both plugins) ---------------------------------------------------------

def test_options_become_router_flags():
    assert RouteOptions().arguments() == ["--backend", "auto"]
    options = RouteOptions.parse(" GND, VCC ,", "2.5", "cpu")
    assert options.arguments() == ["--backend", "cpu", "--nets", "GND,VCC", "--time-limit", "2.5"]
    for fields, says in [(("", "soon", "cpu"), "number of seconds"), (("", "-1", "cpu"), "positive"),
                         (("", "", "tpu"), "engine must be one of")]:
        with pytest.raises(ValueError, match=says):
            RouteOptions.parse(*fields)


def test_options_reach_the_router(tmp_path, channel):
    board, _, everything = channel
    info = run_router(ROUTER, board, tmp_path / "one.kicad_pcb", RouteOptions(["N1"], 60, "cpu"), RecordingUI())
    assert everything["nets"] == 4 and info["nets"] == 1 and info["backend"] == "cpu"


def test_cancel_stops_the_router_and_nothing_is_written(tmp_path):
    """A stand-in router that reports once, then works for a minute: Cancel must stop it at once, not after."""
    fake = tmp_path / "router.py"
    fake.write_text("import json, os, sys, time\n"
                    f"open({str(tmp_path / 'pid')!r}, 'w').write(str(os.getpid()))\n"
                    "print(json.dumps({'stage': 'tasks', 'nets': 3, 'connections': 5}), flush=True)\n"
                    "time.sleep(60)\n")
    ui = RecordingUI(cancel_after=1)
    started = time.monotonic()
    with pytest.raises(Cancelled, match="nothing was changed"):
        run_router([sys.executable, str(fake)], tmp_path / "b.kicad_pcb", tmp_path / "out.kicad_pcb",
                   RouteOptions(), ui)
    assert time.monotonic() - started < 10
    assert ui.lines == ["routing 3 nets, 5 connections"]
    with pytest.raises(ProcessLookupError):                  # stopped and reaped
        os.kill(int((tmp_path / "pid").read_text()), 0)
    assert not (tmp_path / "out.kicad_pcb").exists()


def test_router_refusal_reaches_the_user(tmp_path):
    bad = tmp_path / "bad.kicad_pcb"
    bad.write_text("(kicad_pcb (version 20240108)")
    with pytest.raises(RouterFailed, match="autorouter: error"):
        run_router(ROUTER, bad, tmp_path / "out.kicad_pcb", RouteOptions(engine="cpu"), RecordingUI())


# --- the router's output as items for the open board ----------------------------------------------------------------

def test_new_items_are_exactly_what_the_router_added(channel):
    board, out, info = channel
    original, routed = board.read_text(), out.read_text()
    items = board_items.new_items(original, routed)
    tracks = [i for i in items if isinstance(i, board_items.NewTrack)]
    vias = [i for i in items if isinstance(i, board_items.NewVia)]
    assert (len(tracks), len(vias)) == (info["tracks"], info["vias"]) and tracks
    assert {i.net for i in items} == {"N0", "N1", "N2", "N3"}
    assert {t.layer for t in tracks} <= {"F.Cu", "B.Cu"} and all(t.width > 0 for t in tracks)
    assert all(v.layers == ("F.Cu", "B.Cu") and v.diameter > v.drill > 0 for v in vias)
    with pytest.raises(ValueError, match="not the board sent"):
        board_items.new_items(original.replace("(version", "(version ", 1), routed)


def test_named_nets_as_kicad_10_writes_them():
    original = '(kicad_pcb\n\t(net 1 "A")\n)\n'
    routed = ('(kicad_pcb\n\t(net 1 "A")(segment\n\t\t(start 1 2)\n\t\t(end 3.5 2)\n\t\t(width 0.25)\n\t\t'
              '(layer "In1.Cu")\n\t\t(net "we\\"ird")\n\t\t(uuid "u")\n\t)(via\n\t\t(at 3.5 2)\n\t\t(size 0.6)\n\t\t'
              '(drill 0.3)\n\t\t(layers "F.Cu" "B.Cu")\n\t\t(net 1)\n\t\t(uuid "v")\n\t)\n)\n')
    assert board_items.new_items(original, routed) == [
        board_items.NewTrack((1.0, 2.0), (3.5, 2.0), 0.25, "In1.Cu", 'we"ird'),
        board_items.NewVia((3.5, 2.0), 0.6, 0.3, ("F.Cu", "B.Cu"), "A")]


@needs_kipy
def test_items_become_kipy_tracks_and_vias():
    from kipy.board_types import Net, Track, Via
    from kipy.util.board_layer import BoardLayer
    nets = {"A": Net(name="A")}
    track, via = board_items.to_kipy([board_items.NewTrack((1.0, 2.0), (3.5, 2.000001), 0.25, "In1.Cu", "A"),
                                      board_items.NewVia((3.5, 2.0), 0.6, 0.3, ("F.Cu", "B.Cu"), "A")], nets)
    assert isinstance(track, Track) and isinstance(via, Via)
    assert (track.start.x, track.start.y, track.end.x, track.end.y) == (1_000_000, 2_000_000, 3_500_000, 2_000_001)
    assert track.width == 250_000 and track.layer == BoardLayer.BL_In1_Cu and track.net.name == "A"
    assert (via.position.x, via.position.y, via.diameter, via.drill_diameter) == (3_500_000, 2_000_000, 600_000,
                                                                                 300_000)
    assert via.padstack.drill.start_layer == BoardLayer.BL_F_Cu and via.padstack.drill.end_layer == BoardLayer.BL_B_Cu
    with pytest.raises(ValueError, match="not on the open board"):
        board_items.to_kipy([board_items.NewVia((0, 0), 0.6, 0.3, ("F.Cu", "B.Cu"), "B")], nets)


class FakeBoard:
    """kipy's Board as the plugin uses it, over a board file: what it saves, and the commits it is asked for."""

    def __init__(self, path: Path):
        from kipy.board_types import Net
        self.path, self.name, self.calls = path, path.name, []
        self.nets = [Net(name=n) for n in ("", "N0", "N1", "N2", "N3")]

    def save_as(self, filename, overwrite=False, include_project=True):
        shutil.copy(self.path, filename)
        shutil.copy(self.path.with_suffix(".kicad_pro"), Path(filename).with_suffix(".kicad_pro"))

    def get_project(self):
        return type("Project", (), {"path": str(self.path.parent)})()

    def get_nets(self):
        return self.nets

    def begin_commit(self):
        self.calls.append(("begin",))
        return "commit"

    def create_items(self, items):
        self.calls.append(("create", list(items)))

    def push_commit(self, commit, message=""):
        self.calls.append(("push", commit, message))

    def drop_commit(self, commit):
        self.calls.append(("drop", commit))


@needs_kipy
def test_the_open_board_gets_every_new_item_in_one_commit(channel):
    import autoroute
    board, _, info = channel
    fake, ui = FakeBoard(board), RecordingUI()
    assert autoroute.route_open_board(fake, ui, RouteOptions(engine="cpu"), ROUTER)["tracks"] == info["tracks"]
    assert [c[0] for c in fake.calls] == ["begin", "create", "push"]
    assert len(fake.calls[1][1]) == info["tracks"] + info["vias"] and fake.calls[2][2] == "Autoroute (autorouter)"
    assert "connections routed" in ui.finished[0] and not ui.errors

    cancelling = FakeBoard(board), RecordingUI(cancel_after=1)
    assert autoroute.route_open_board(*cancelling, RouteOptions(engine="cpu"), ROUTER) is None
    assert cancelling[0].calls == [] and "cancelled" in cancelling[1].errors[0]     # the board is not touched


# --- the real thing: KiCad 9's PCB editor, its API server, the installed plugin -------------------------------------

def kicad_with_api(folder: Path, board: Path, display: dict):
    """pcbnew on `display` with its own settings (the API server on, empty library tables: no first-run dialogs)."""
    config = folder / "config" / "9.0"
    config.mkdir(parents=True)
    (config / "kicad_common.json").write_text(json.dumps({"api": {"enable_server": True}}))
    (config / "fp-lib-table").write_text("(fp_lib_table\n\t(version 7)\n)\n")
    (config / "sym-lib-table").write_text("(sym_lib_table\n\t(version 7)\n)\n")
    env = {**display, "KICAD_CONFIG_HOME": str(folder / "config"), "KICAD_DOCUMENTS_HOME": str(folder / "docs"),
           "HOME": str(folder), "XDG_RUNTIME_DIR": str(folder)}
    return subprocess.Popen(["pcbnew", str(board)], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def connect_to(board: Path, timeout: float = 120):
    """The API socket of the KiCad that has `board` open (others may run KiCad on this machine too)."""
    from kipy import KiCad
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for socket in sorted(Path("/tmp/kicad").glob("*.sock")) if Path("/tmp/kicad").is_dir() else []:
            try:
                kicad = KiCad(socket_path=f"ipc://{socket}", client_name="autorouter-test", timeout_ms=5000)
                if Path(kicad.get_board().get_project().path) == board.parent:
                    return kicad, f"ipc://{socket}"
            except Exception:
                pass
        time.sleep(2)
    pytest.fail("KiCad's API server did not come up with the board open")


def drive_the_plugin(board: Path, plugin: Path, folder: Path) -> Path:
    """Run the installed plugin against the KiCad that has `board` open, as KiCad runs it (its API socket in the
    environment), check that one undo takes its work back, and save what the editor then holds."""
    kicad, socket = connect_to(board)
    open_board = kicad.get_board()
    assert len(open_board.get_tracks()) == 0
    proc = subprocess.run([sys.executable, str(plugin / "autoroute.py"), "--console", "--engine", "cpu"],
                          capture_output=True, text=True, timeout=600, cwd=plugin,
                          env={**os.environ, "KICAD_API_SOCKET": socket})
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "connections routed" in proc.stdout
    tracks, vias = len(open_board.get_tracks()), len(open_board.get_vias())
    assert tracks > 0
    kicad.run_action("common.Interactive.undo")              # one commit: one undo takes all of it back
    assert (len(open_board.get_tracks()), len(open_board.get_vias())) == (0, 0)
    kicad.run_action("common.Interactive.redo")
    assert (len(open_board.get_tracks()), len(open_board.get_vias())) == (tracks, vias)
    routed = folder / "routed" / "routed.kicad_pcb"
    routed.parent.mkdir()
    open_board.save_as(str(routed), overwrite=True, include_project=True)
    return routed


@needs_kicad
@needs_kipy
@needs_xvfb
@pytest.mark.kicad
def test_plugin_routes_the_board_open_in_kicad(tmp_path):
    from conftest import judge
    j = judge()
    _, src, _ = j.resolve("ecc83-pp", str(tmp_path))
    board = tmp_path / "board" / "ipc-plugin-test.kicad_pcb"
    board.parent.mkdir()
    j.strip(src, str(board))
    j.copy_project(str(src), str(board))
    done = install(tmp_path / "plugins", "ipc", KiCadFound("9.0", True))
    with xvfb() as display:
        editor = kicad_with_api(tmp_path / "kicad", board, display)
        try:
            routed = drive_the_plugin(board, done.path, tmp_path)
        finally:
            editor.terminate()
            editor.wait(30)
    before, after = j.drc(str(board)), j.drc(str(routed))
    assert before["unconnected"] > 0 and after["unconnected"] == 0
    added = {k: n - before["violations_by_type"].get(k, 0) for k, n in after["violations_by_type"].items()}
    assert not {k: n for k, n in added.items() if n > 0}
