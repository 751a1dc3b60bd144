"""An X display for tests that open KiCad's windows (Xvfb).

X clients on Linux connect through an abstract socket first, which is shared by every process in the network
namespace, even those that do not share our /tmp: a display number whose lock file we cannot see may still be
another user's server, and our windows would then go to it and be refused (`xvfb-run -a` and `Xvfb -displayfd`
both fell into that here). So the number is drawn at random from a high range and skipped while any abstract socket
of that number is listed in /proc/net/unix."""
from __future__ import annotations

import contextlib
import os
import random
import shutil
import subprocess
from pathlib import Path

import pytest

needs_xvfb = pytest.mark.skipif(shutil.which("Xvfb") is None, reason="Xvfb is not installed (apt install xvfb)")


def free_display() -> int:
    listed = Path("/proc/net/unix").read_text() if Path("/proc/net/unix").exists() else ""
    while True:
        number = random.randrange(200, 60000)
        if f"/tmp/.X11-unix/X{number}\n" not in listed and not Path(f"/tmp/.X{number}-lock").exists():
            return number


@contextlib.contextmanager
def xvfb():
    """Yields the environment to run a program on a fresh virtual display; the server is stopped afterwards."""
    read, write = os.pipe()
    server = subprocess.Popen(["Xvfb", f":{free_display()}", "-displayfd", str(write), "-screen", "0", "1280x800x24",
                               "-nolisten", "tcp"], pass_fds=(write,), stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    os.close(write)
    try:
        with os.fdopen(read) as ready:
            number = ready.readline().strip()        # written once the server accepts connections
        if not number:
            pytest.fail("Xvfb did not start")
        yield {**os.environ, "DISPLAY": f":{number}"}
    finally:
        server.terminate()
        server.wait(30)
