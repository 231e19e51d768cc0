"""One writer per run folder: a second run, resume, rescore or merge is refused by pid."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from groundeval.state._store import RunLock, RunLockedError, RunStore
from tests._support.paths import REPO
from tests.state.test_run_store import _cli, _suite

ENV = {**os.environ, "PYTHONPATH": str(REPO)}


def _wait_for_lock(lock: Path, pid: int, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if lock.exists() and lock.read_text().strip() == str(pid):
            return
        time.sleep(0.05)
    raise AssertionError(f"{lock} never named pid {pid}")


def test_second_writer_process_is_refused_naming_the_holder(tmp_path: Path) -> None:
    programs, images = _suite(tmp_path, 30, sleep=0.5)  # about 30 s of grading
    out = tmp_path / "run"
    args = ["run", str(programs), "--images", str(images), "--out", str(out), "--concurrency", "1"]
    first = subprocess.Popen(
        _cli(*args), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=ENV
    )
    try:
        _wait_for_lock(out / "run.lock", first.pid)
        for second in (_cli(*args, "--resume"), _cli("rescore", str(out))):
            done = subprocess.run(second, capture_output=True, text=True, env=ENV, timeout=120)
            assert first.poll() is None, "the first run ended before the check"
            assert done.returncode == 1, done.stdout + done.stderr
            assert f"another groundeval process (pid {first.pid})" in done.stderr
        graded = len(RunStore(out).results())
        assert graded < 30  # the refused resume graded nothing alongside the first run
    finally:
        first.kill()
        first.wait()
    with RunStore(out).lock("rescore"):  # the killed holder's lock is gone with it
        pass


def test_lock_is_released_by_a_crashed_holder(tmp_path: Path) -> None:
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import fcntl, os, sys, time\n"
            "fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT)\n"
            "fcntl.flock(fd, fcntl.LOCK_EX)\n"
            "os.write(fd, str(os.getpid()).encode())\n"
            "time.sleep(60)\n",
            str(tmp_path / "run.lock"),
        ]
    )
    try:
        _wait_for_lock(tmp_path / "run.lock", holder.pid)
        with pytest.raises(RunLockedError, match=f"pid {holder.pid}"):
            RunLock(tmp_path, "rescore").acquire()
    finally:
        holder.kill()
        holder.wait()
    with RunLock(tmp_path) as lock:  # the kernel dropped the dead holder's lock
        assert (tmp_path / "run.lock").read_text().strip() == str(os.getpid())
        assert lock.path == tmp_path / "run.lock"
