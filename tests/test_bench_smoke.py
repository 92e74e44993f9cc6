"""The benchmark (bench/run.py) runs end to end in its tiniest mode and reports every pair.

No timing assertions: only that it completes, prints each pair and writes its JSON.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import git_version

pytestmark = pytest.mark.once  # a volume/generator test: under the machine's git only (.ci/run)

RUN = Path(__file__).resolve().parents[1] / "bench" / "run.py"


@pytest.mark.timeout(600)
def test_bench_smoke_prints_every_pair(tmp_path):
    out = tmp_path / "bench.json"
    proc = subprocess.run([sys.executable, str(RUN), "--smoke", "--json", str(out)],
                          cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=540)
    text = proc.stdout.decode()
    assert proc.returncode == 0, (text, proc.stderr.decode())
    assert "Traceback" not in proc.stderr.decode()
    for pair in ("| 1 save |", "| 2 restore |", "| 3 commit |", "| 4 list (20) |", "| 5 peer |", "| 6 growth |", "| 9 reftable |",
                 "| 7 fixed cost |", "| 6 history (30 vs 10) |", "| 6 first push (20) |", "| 8 memory |",
                 "| 6 list --all (16) |", "| 5 mcp save |", "| 5 stop hook |", "| 10 overlay restore |",
                 "| 11 overlay patterns |", "| 12 graph (200) |", "| 13 scope (100) |"):
        assert pair in text, pair
    data = json.loads(out.read_text())
    assert data["schema"] == "ckpt-bench/1" and data["mode"] == "smoke"
    pairs = {r["pair"] for r in data["rows"]}
    assert pairs == {"1 save", "2 restore", "3 commit", "4 list (20)", "5 peer", "9 reftable", "7 fixed cost",
                     "6 history (10)", "6 history (30)", "6 history (30 vs 10)", "6 first push (20)", "8 memory",
                     "6 list --all (16)", "5 mcp save", "5 stop hook", "10 overlay restore", "11 overlay patterns",
                     "12 graph (200)", "13 scope (100)"}
    reftable = [r for r in data["rows"] if r["pair"] == "9 reftable"]
    assert [(r["a"], r["b"]) for r in reftable] == [("git ckpt save (reftable)", "git ckpt save (files)"),
                                                    ("git ckpt restore (reftable)", "git ckpt restore (files)")]
    # measured where git can migrate refs (2.46+), skipped with the reason otherwise
    assert {r["status"] for r in reftable} == ({"info"} if git_version() >= (2, 46) else {"skipped"}), reftable
    large = {"large-big.bin", "large-big.crlf", "large-fixtures-big.fixture"}  # a repository per large-file case
    assert {r["tree"] for r in data["rows"]} == {"stdlib", "synthetic-300", "ten-files", "history", "pushing", "many-tasks",
                                                 "stop-hook", "overlay-200", "patterns-800", "ledger-200", "scope-100"} | large | {r["tree"] for r in reftable}
    for r in data["rows"]:
        assert r["status"] in ("met", "missed", "info", "skipped"), r
        assert "did not reach" not in r["note"], r
        if r["pair"] == "8 memory":  # peak RSS, in the note: "N MB vs M MB" (and the save, for a large file)
            assert re.fullmatch(r"\d+ MB vs \d+ MB(; the save that made it: \d+ MB)?", r["note"]), r
            assert ("the save" in r["note"]) == (r["tree"] in large), r
        elif r["status"] != "skipped":
            assert r["a_median_s"] > 0 and r["b_median_s"] > 0, r
    assert [(r["a"], r["b"], r["note"]) for r in data["rows"] if r["pair"] == "12 graph (200)"] == [
        ("git ckpt log --graph", "git ckpt log", "200 events, a restore to an unknown name before each save; 1 lane(s)"),
        ("git ckpt report --html", "git ckpt log", "context: 200 events, a restore to an unknown name before each save; 1 lane(s)")]
    assert [r["note"] for r in data["rows"] if r["pair"] == "13 scope (100)"] == ["a next step of 300 words (1395 characters), 100 new files"]
    assert data["growth"]["checkpoints"] == 3 and data["growth"]["git_dir_after"] > data["growth"]["git_dir_before"]
    for key in ("nproc", "python", "git", "pygit2", "libgit2"):
        assert data["machine"][key]


def test_bench_rejects_unknown_pair(tmp_path):
    proc = subprocess.run([sys.executable, str(RUN), "--smoke", "--only", "nope"], cwd=tmp_path,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
    assert proc.returncode == 2
    assert b"unknown pairs: nope" in proc.stderr
