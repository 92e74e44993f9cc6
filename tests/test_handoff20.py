"""What the twentieth handoff pass found, each as its kind.

- Two views of where the worktree stands, computed two ways: after ``git ckpt restore T/N`` on a
  HEAD that had moved since T/N was saved, ``status`` said ``worktree: matches T/N`` (and ``diff``
  showed nothing) while the handoff receipt said ``Workspace: changed since T/N`` and
  ``handoff --check`` reported ``DRIFT worktree: index, HEAD or overlay differ`` (exit 1): only
  ``--reset-head`` cleared it, though a HEAD that *commits* the checkpoint was fine.  The
  receipt, its ``--json`` and ``--check`` now rest on status's own facts
  (``git_ckpt.status.facts``): the files, index and overlay match and HEAD moved is said as such
  (not drift), and a difference names which of files, index, overlay and HEAD differ.

Real repositories, the real ``git`` and ``git ckpt``.
"""

from __future__ import annotations

from conftest import ckpt, git


def _restored_on_moved_head(repo):
    """The brief's repro: T/1 saved, a commit since, T/1 restored without --reset-head."""
    ckpt(repo, "task", "start", "t", "--goal", "g")
    (repo / "README").write_text("a2\n")
    ckpt(repo, "save", "-m", "edit")
    base = git(repo, "rev-parse", "HEAD").decode().strip()
    (repo / "b.py").write_text("b\n")
    git(repo, "add", "b.py")
    git(repo, "commit", "-q", "-m", "add b")
    ckpt(repo, "restore", "t/1")
    return base, git(repo, "rev-parse", "HEAD").decode().strip()


def test_handoff_says_what_status_says_when_only_head_moved(repo):
    from test_verify import verifier, write_config

    write_config(repo, verifier("ok", ["true"]))
    base, head = _restored_on_moved_head(repo)
    out = ckpt(repo, "status").out.splitlines()
    assert out[3:5] == ["worktree:  matches t/1 (@)", f"HEAD:      not where t/1 was saved (saved on {base[:12]}, HEAD is {head[:12]})"]
    assert ckpt(repo, "diff").out == ""
    said = "matches t/1; HEAD moved since (git ckpt restore t/1 --reset-head brings it back)"
    assert f"Workspace: {said}" in ckpt(repo, "handoff").out.splitlines()
    r = ckpt(repo, "handoff", "--json").json()["result"]
    assert r["workspace"] == "clean"
    assert r["worktree"] == {"checkpoint": "t/1", "files_match": True, "head_moved": True, "head_commits": False,
                             "base": base, "head": head, "exact": False, "differs": ["HEAD"],
                             "reset_head": "git ckpt restore t/1 --reset-head"}
    # not drift: the files, index and overlay are the checkpoint's; the verifier is re-run on them
    res = ckpt(repo, "handoff", "--check")
    assert res.out.splitlines()[1:] == [f"ok    worktree: {said}",
                                        "ok    verifier ok: re-run: passed (recorded), nothing recorded before",
                                        "handoff of t: no drift"]
    # --reset-head brings HEAD back, as said: then exactly the checkpoint
    ckpt(repo, "restore", "t/1", "--reset-head")
    assert "Workspace: clean (matches t/1)" in ckpt(repo, "handoff").out.splitlines()
    assert ckpt(repo, "handoff", "--check").out.splitlines()[1] == "ok    worktree: matches t/1"


def test_handoff_names_what_differs(repo):
    (repo / ".ckpt.toml").write_text('[overlay]\ninclude = ["cfg/"]\n')
    (repo / ".gitignore").write_text("cfg/\n")
    (repo / "cfg").mkdir()
    (repo / "cfg" / "local.env").write_text("A=1\n")
    git(repo, "add", ".ckpt.toml", ".gitignore")
    git(repo, "commit", "-q", "-m", "overlay")
    ckpt(repo, "task", "start", "t")
    (repo / "README").write_text("unstaged\n")
    ckpt(repo, "save", "-m", "s")

    def said() -> tuple[str, str, list[str]]:
        ws = next(ln for ln in ckpt(repo, "handoff").out.splitlines() if ln.startswith("Workspace: "))
        env = ckpt(repo, "handoff", "--check", "--json", rc=1).json()["result"]
        row = next(c for c in env["checks"] if c["check"] == "worktree")
        assert env["drift"] == [f"worktree differs from t/1: {row['detail']}"]
        return ws, row["detail"], row["differs"]

    git(repo, "add", "README")  # the index stages what the checkpoint left unstaged
    assert said() == ("Workspace: changed since t/1 (index differs)", "index differs", ["index"])
    git(repo, "reset", "-q")
    (repo / "cfg" / "local.env").write_text("A=2\n")
    assert said() == ("Workspace: changed since t/1 (overlay differs)", "overlay differs", ["overlay"])
    (repo / "new.py").write_text("n\n")
    assert said() == ("Workspace: changed since t/1 (files and overlay differ)",
                      "files and overlay differ (changed: new.py)", ["files", "overlay"])
    (repo / "cfg" / "local.env").write_text("A=1\n")
    git(repo, "add", "new.py")
    git(repo, "commit", "-q", "-m", "new")
    assert said() == ("Workspace: changed since t/1 (files and HEAD differ)",
                      "files and HEAD differ (changed: new.py)", ["files", "HEAD"])
    (repo / "new.py").unlink()
    git(repo, "add", "README")
    assert said() == ("Workspace: changed since t/1 (index and HEAD differ)", "index and HEAD differ", ["index", "HEAD"])
