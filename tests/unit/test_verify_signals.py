"""Ctrl-C at any moment of a verifier's run is recorded as ``interrupted`` and ends its group."""

from __future__ import annotations

import os
import signal
import threading

from git_ckpt import verify


def test_ctrl_c_between_starting_a_verifier_and_waiting_for_it(tmp_path, monkeypatch):
    # SIGINT lands right after the child started and before the wait: the window the deferred
    # handler closes (without it KeyboardInterrupt escapes run_command, nothing is recorded and
    # the verifier's group keeps running).
    pidfile = tmp_path / "pid"
    real_start = threading.Thread.start

    def start_then_interrupt(self: threading.Thread) -> None:
        real_start(self)
        os.kill(os.getpid(), signal.SIGINT)

    monkeypatch.setattr(threading.Thread, "start", start_then_interrupt)
    seen: list[bytes] = []
    res = verify.run_command(f"echo $$ > {pidfile}; exec sleep 60", cwd=tmp_path, env=dict(os.environ), timeout=120, sink=seen.append)
    assert (res.status, res.exit_code) == ("interrupted", 130)
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    pid = int(pidfile.read_text()) if pidfile.exists() else None
    if pid is not None:  # the shell got far enough to write its pid: its group must be gone
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            pass
        else:
            raise AssertionError(f"verifier process {pid} still runs")


def test_a_ctrl_c_outside_the_window_still_raises(tmp_path):
    # The handler is put back: an interrupt after run_command returns is a KeyboardInterrupt.
    res = verify.run_command(["true"], cwd=tmp_path, env=dict(os.environ), timeout=60, sink=lambda b: None)
    assert (res.status, res.exit_code) == ("passed", 0)
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
