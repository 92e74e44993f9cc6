"""One evidence rule for every kind of `task note` (README "Evidence names checkpoints and results
that exist"): a spec spelled like a checkpoint (T/N, REMOTE:T/N, T/@…) or a result (T/N#V) must
exist, else exit 4 with one `error: evidence '…': …` line and a hint; `file:PATH` must be inside
the worktree; anything else is free text only where text evidence is allowed (not `--failed`).
Also: nothing to act on (`undo`, `restore --continue`) is a usage error (exit 2)."""

from __future__ import annotations

import pytest

from conftest import ckpt, git, init_repo
from test_verify import verifier, write_config

KINDS = {
    "fact": ["--fact", "y"],
    "failed": ["--failed", "z", "--reason", "r"],
    "confirm": ["--confirm", "1"],
    "refute": ["--refute", "1"],
}

# spec → (exit code for a kind that takes text, exit code for --failed, start of the error line)
SHAPES = {
    "fix-auth/99": (4, 4, "error: evidence 'fix-auth/99': no checkpoint fix-auth/99\n"
                          "hint: did you mean fix-auth/1 (the latest of fix-auth)? "),
    "nosuchtask/3": (4, 4, "error: evidence 'nosuchtask/3': no checkpoint nosuchtask/3: there is no task nosuchtask\n"),
    "fix-ath/1": (4, 4, "error: evidence 'fix-ath/1': no checkpoint fix-ath/1: there is no task fix-ath\n"
                        "hint: did you mean fix-auth? "),
    "origin:fix-auth/7": (4, 4, "error: evidence 'origin:fix-auth/7': no checkpoint origin:fix-auth/7: there is no task origin:fix-auth\n"),
    "nosuchtask/@": (4, 4, "error: evidence 'nosuchtask/@': no task nosuchtask\n"),
    "fix-auth/@~5": (4, 4, "error: evidence 'fix-auth/@~5': fix-auth/@~5: task fix-auth has only 1 checkpoint(s)"),
    "9": (4, 4, "error: evidence '9': no checkpoint fix-auth/9\n"),
    "fix-auth/1#tsts": (4, 4, "error: evidence 'fix-auth/1#tsts': no result of verifier 'tsts' on fix-auth/1\n"
                              "hint: did you mean fix-auth/1#tests? git ckpt show fix-auth/1 lists its results\n"),
    "fix-auth/99#tests": (4, 4, "error: evidence 'fix-auth/99#tests': no checkpoint fix-auth/99\n"),
    "fix-auth/1": (0, 0, ""),
    "fix-auth/1#tests": (0, 0, ""),
    "@#tests": (0, 0, ""),
    "file:a.txt": (0, 2, ""),
    "a.txt": (0, 2, ""),
    "file:../outside": (2, 2, "error: "),
    "text:seen in the logs": (0, 2, ""),
    "issue #12 says so": (0, 2, ""),
}


@pytest.fixture
def noted(tmp_path):
    repo = init_repo(tmp_path / "repo")
    git(tmp_path, "init", "-q", "--bare", str(tmp_path / "shared.git"))
    git(repo, "remote", "add", "origin", str(tmp_path / "shared.git"))
    write_config(repo, verifier("tests", ["true"]))
    ckpt(repo, "task", "start", "fix-auth")
    (repo / "a.txt").write_text("a\n")
    ckpt(repo, "save")
    ckpt(repo, "verify")
    return repo


@pytest.mark.parametrize("kind", KINDS)
def test_every_kind_of_note_follows_one_evidence_rule(noted, kind):
    for spec, (rc_text, rc_failed, err) in SHAPES.items():
        if kind in ("confirm", "refute"):
            ckpt(noted, "task", "note", "--assume", "a guess")
        rc = rc_failed if kind == "failed" else rc_text
        res = ckpt(noted, "task", "note", *KINDS[kind], "--evidence", spec, rc=rc)
        assert res.err.startswith(err), (kind, spec, res.err)
        if rc == 4:
            assert res.err.count("\n") == 2 and res.err.splitlines()[1].startswith("hint: "), (spec, res.err)
        elif rc == 2 and not spec.startswith("file:../"):
            assert res.err == (f"error: evidence {spec!r} is not a checkpoint or a verifier result\n"
                               "hint: cite a checkpoint (T/N) or a result (T/N#VERIFIER), e.g. --evidence fix-auth/1#tests\n")  # this task's
        elif rc == 0:
            assert res.err == "" and res.out.startswith("task card of fix-auth updated (event #"), (spec, res)
    card = ckpt(noted, "task", "show", "--json").json()["result"]
    # nothing refused was recorded: no evidence names checkpoint 99 or the task nosuchtask (the
    # card's commit ids and times are left out of the search: a hex id may well hold "99")
    cited = [str(e.get(k)) for v in card.values() if isinstance(v, list) for item in v if isinstance(item, dict)
             for e in item.get("evidence", []) for k in ("checkpoint", "text", "file")]
    assert cited and not [c for c in cited if "/99" in c or "nosuchtask" in c], cited


def test_nothing_to_undo_or_continue_is_a_usage_error(repo):
    """Nothing to act on is an error of the request (exit 2, as `git stash pop` with no stash),
    not an unknown name (exit 4)."""
    res = ckpt(repo, "undo", rc=2)
    assert res.err == ("error: nothing to undo: no restore was made from this worktree\n"
                       "hint: git ckpt log shows the history of the task\n")
    res = ckpt(repo, "restore", "--continue", rc=2)
    assert res.err == ("error: no interrupted restore to continue\n"
                       "hint: git ckpt status shows the state of this worktree\n")
    assert ckpt(repo, "undo", "--json", rc=2).json()["error"]["exit_code"] == 2
