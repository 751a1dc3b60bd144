"""Attempts side by side (`--jobs`): the same board as one after another where the first attempt is whole, the best
attempt kept, later ones stopped once an earlier one is flawless, and the settings each worker gets."""
import json
import subprocess
import sys
import time

from conftest import BOARDS, needs_shared


def run(*args):
    return subprocess.run([sys.executable, "-m", "autorouter", *map(str, args)], capture_output=True, text=True,
                          timeout=600)


@needs_shared
def test_side_by_side_writes_what_one_after_another_writes(tmp_path):
    board = BOARDS / "k10_tastexx.kicad_pcb"
    one = run("route", board, "-o", tmp_path / "one.kicad_pcb", "--backend", "cpu", "-q")
    many = run("route", board, "-o", tmp_path / "many.kicad_pcb", "--backend", "cpu", "--jobs", "3", "--json")
    assert one.returncode == many.returncode == 0, many.stderr
    assert (tmp_path / "one.kicad_pcb").read_bytes() == (tmp_path / "many.kicad_pcb").read_bytes()
    info = json.loads(many.stdout)
    assert info["output"] == str(tmp_path / "many.kicad_pcb") and len(info["attempts"]) == 3
    assert info["notes"][-1] == "3 attempts routed side by side: attempt 1 (the settings given) kept"
    assert (tmp_path / "many.kicad_pro").exists() and not any("beside the output" in n and "many" not in n
                                                               for n in info["notes"])


def test_a_bad_jobs_value_is_a_one_line_error(tmp_path):
    proc = run("route", tmp_path / "b.kicad_pcb", "-o", tmp_path / "o.kicad_pcb", "--jobs", "0")
    assert proc.returncode == 2 and "jobs" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


def summary(missing: int, starved: int = 0, output: str = "board") -> dict:
    return {"stage": "summary", "output": output, "connections": 10, "connections_routed": 10 - missing,
            "drc_by_kind": {"starved_thermal": starved} if starved else {}, "drc_violations": starved, "notes": []}


def test_the_best_attempt_is_kept_and_those_after_a_flawless_one_are_stopped(tmp_path, monkeypatch):
    from autorouter import jobs
    # (seconds before its summary, the summary): the second is flawless; the third would take a minute
    plan = [(0.5, summary(2)), (0.2, summary(0)), (60, summary(0)), (0.1, summary(1))]

    def start(index, settings, change, board_path, folder, passed, on_event):
        folder.mkdir(parents=True)
        wait, said = plan[index]
        code = (f"import json, time; print(json.dumps({{'stage': 'iteration', 'iteration': 1}}), flush=True); "
                f"time.sleep({wait}); print(json.dumps({said!r}))")
        return jobs.launch(index, change, folder, [sys.executable, "-c", code], on_event)
    monkeypatch.setattr(jobs, "start", start)
    events = []
    t0 = time.monotonic()
    best, workers = jobs.route_side_by_side("b.kicad_pcb", [(None, f"change {k}") for k in range(4)], tmp_path, [],
                                            lambda k, e: events.append((k, e["stage"])), lambda: "")
    assert best.index == 1 and best.change == "change 1" and time.monotonic() - t0 < 30
    assert workers[2].summary is None and workers[2].process.returncode != 0        # stopped
    assert workers[3].summary is not None                       # done before it could be stopped: still chosen from
    assert sorted(events) == [(k, "iteration") for k in range(4)]


def test_starved_reliefs_then_errors_then_the_earliest_decide(tmp_path, monkeypatch):
    from autorouter import jobs
    plan = [summary(1), summary(0, starved=2), summary(0, starved=1), summary(0, starved=1), summary(0, output=None)]

    def start(index, settings, change, board_path, folder, passed, on_event):
        folder.mkdir(parents=True)
        return jobs.launch(index, change, folder, [sys.executable, "-c", f"print({json.dumps(plan[index])!r})"],
                           on_event)
    monkeypatch.setattr(jobs, "start", start)
    best, _ = jobs.route_side_by_side("b.kicad_pcb", [(None, "")] * 5, tmp_path, [], lambda k, e: None, lambda: "")
    assert best.index == 2                  # attempt 5 is flawless but wrote nothing (interrupted)


@needs_shared
def test_each_worker_routes_one_attempt_of_the_retries(tmp_path):
    from autorouter.board import load_board
    from autorouter.board.rules import load_rules
    from autorouter.config import RouterConfig
    from autorouter.jobs import variants
    from autorouter.pipeline import attempts, board_lattice
    board = load_board(BOARDS / "k10_tastexx.kicad_pcb")
    config = RouterConfig(jobs=4, time_limit=100)
    rules = load_rules(board, config, None)
    settings = variants(board, rules, config)
    assert len(settings) == 4 and settings[0] == (config.replace(retries=0, jobs=1), "the settings given")
    assert all(s.retries == 0 and s.jobs == 1 and s.time_limit == 100 for s, _ in settings)
    every = list(attempts(config, board_lattice(board, rules, config).pitch))
    assert [s for s, _ in settings] == [a.replace(retries=0, jobs=1) for a in every
                                        if not a.escape_length and not a.pin_lattice][:4]   # no fine row here
    assert settings[1][1] == "via_cost 4.0, hist_fac 1.0"
