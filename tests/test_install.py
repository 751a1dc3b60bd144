"""The package as a user installs it: a fresh virtual environment, `pip install .`, then the `autorouter` command.

The environment sees the test machine's packages for the dependencies (no network needed), but autorouter itself,
its kernels included, must come from the wheel just built, not from this checkout."""
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import BOARDS, ROOT, needs_shared


@needs_shared
@pytest.mark.slow
def test_pip_install_then_route(tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True)
    python, command = venv / "bin" / "python", venv / "bin" / "autorouter"
    proc = subprocess.run([python, "-m", "pip", "install", "--quiet", "--no-deps", str(ROOT)],
                          capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    where = subprocess.run([python, "-c", "import autorouter, pathlib; print(pathlib.Path(autorouter.__file__).parent)"],
                           capture_output=True, text=True, cwd=tmp_path, check=True).stdout.strip()
    package = Path(where)
    assert venv in package.parents, f"autorouter imported from {package}, not from the installed wheel"
    for kernel in ("search/kernels/sweep.cu", "search/kernels/near_far.cu", "search/kernels/roi.cuh",
                   "pathfinder/kernels/costs.cu"):
        assert (package / kernel).is_file(), f"{kernel} is missing from the installed package"
    version = subprocess.run([command, "--version"], capture_output=True, text=True, cwd=tmp_path)
    assert version.returncode == 0 and version.stdout.startswith("autorouter "), version.stderr
    out = tmp_path / "routed.kicad_pcb"
    proc = subprocess.run([command, "route", BOARDS / "k10_tastexx.kicad_pcb", "-o", out, "-q"],
                          capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 0 and out.exists(), proc.stderr[-2000:]
