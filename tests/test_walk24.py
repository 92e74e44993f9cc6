"""What the twenty-fourth new-user walkthrough of the README met (two people and a bare remote).

1. ``task start T`` beside a fetched ``origin:T`` said ``git ckpt restore origin:T/@`` while the
   handoff's Resume said ``origin:T/N``; and ``push --task T`` of a task only fetched answered
   with another, unrelated local task.  Both now name the same checkpoint (the one the handoff
   rests on) and say how to continue under a name of one's own.
2. ``verify-commit`` of a commit whose only passing result was fetched named the reason but no
   command, and called a checkpoint promoted on the remote "(promoted)", as if promoted here.
3. A save after restoring a checkpoint onto another HEAD got the default message ``HEAD moved
   to …`` though HEAD had not moved; a save after committing ``@`` said only that HEAD moved.
4. ``init`` did not say the next step (name the verifiers, then ``git ckpt trust``).
5. A remote's ``file://`` URL typed for its name got the generic hint (its plain path got
   "that is the URL of remote origin").
6. ``handoff --check`` said ``ok`` beside a required verifier whose re-run failed when nothing
   had been recorded before, and exited 0.
7. After ``@`` was committed and a file edited, ``status`` said HEAD was "not where it was
   saved" and the handoff "files and HEAD differ": HEAD commits it, whatever the files.

Real repositories, a bare remote and the real ``git ckpt`` entry point.
"""

from __future__ import annotations

import pytest

from conftest import ckpt, git, with_remote


def _two_people(tmp_path, *, saves: int = 2):
    """A bare remote; alice saved ``saves`` checkpoints of task ``share``, restored ``share/1``
    (so her ledger rests on it, not on the latest) and pushed; bob cloned and fetched."""
    remote, alice = with_remote(tmp_path)
    ckpt(alice, "task", "start", "share")
    for n in range(saves):
        (alice / "a.txt").write_text(f"alice {n}\n")
        ckpt(alice, "save", "-m", f"alice {n}")
    if saves > 1:
        ckpt(alice, "restore", "share/1")
    ckpt(alice, "push")
    bob = tmp_path / "bob"
    git(tmp_path, "clone", "-q", str(remote), str(bob))
    ckpt(bob, "fetch")
    return alice, bob


def _resume_restore(repo, task: str) -> str:
    """The ``git ckpt restore …`` line of ``task``'s handoff Resume section."""
    lines = [ln.strip().strip("`") for ln in ckpt(repo, "handoff", task).out.splitlines()]
    return next(ln for ln in lines if ln.startswith("git ckpt restore "))


def test_task_start_and_handoff_name_the_same_fetched_checkpoint(tmp_path):
    _alice, bob = _two_people(tmp_path)
    assert _resume_restore(bob, "origin:share") == "git ckpt restore origin:share/1"
    res = ckpt(bob, "task", "start", "share")
    assert res.err == ("warning: origin:share already exists (fetched); pushing a task of the same name would be refused "
                       "(checkpoints are never overwritten): to continue that work, start a task of your own (e.g. share-2) "
                       "and git ckpt restore origin:share/1\n")
    # the command said works as printed, and lands on the checkpoint alice's ledger rests on
    ckpt(bob, "task", "start", "share-2")
    ckpt(bob, "restore", "origin:share/1")
    assert (bob / "a.txt").read_text() == "alice 0\n"


@pytest.mark.parametrize("others", [[], ["mine"]])
def test_push_of_a_task_only_fetched_says_whose_it_is(tmp_path, others):
    _alice, bob = _two_people(tmp_path)
    for name in others:  # an unrelated local task was offered as "did you mean" / "the tasks are"
        ckpt(bob, "task", "start", name)
        (bob / f"{name}.txt").write_text(name)
        ckpt(bob, "save", "-m", name)
    refs_before = git(bob, "for-each-ref").decode()
    res = ckpt(bob, "push", "--task", "share", rc=4)
    assert res.out == ""
    assert res.err == ("error: no task share here: origin:share is fetched from origin, whose owner pushes it\n"
                       "hint: to continue that work, start a task of your own (e.g. share-2) "
                       "and git ckpt restore origin:share/1\n")
    assert git(bob, "for-each-ref").decode() == refs_before
    # a plain typo still gets the words every command gives
    assert ckpt(bob, "push", "--task", "nosuch", rc=4).err.startswith("error: no task nosuch\nhint: ")


def _trusted_required(repo, command: str = "true") -> None:
    (repo / ".ckpt.toml").write_text(f'[[verifier]]\nname = "tests"\ncommand = "{command}"\nrequired = true\n')
    git(repo, "add", ".ckpt.toml")
    git(repo, "commit", "-qm", "config")
    ckpt(repo, "trust")


def test_verify_commit_with_only_a_fetched_result_names_the_command_that_records_one(tmp_path):
    alice, bob = _two_people(tmp_path, saves=1)
    for who in (alice, bob):
        _trusted_required(who)
    # both commit the same config, so the trees agree; alice's checkpoint is of that tree
    ckpt(alice, "task", "start", "gated")
    (alice / "a.txt").unlink()  # share's untracked file: bob has none
    ckpt(alice, "save", "-m", "config")
    ckpt(alice, "verify")
    ckpt(alice, "push", "--task", "gated")
    ckpt(bob, "fetch")
    head = git(bob, "rev-parse", "HEAD").decode().strip()
    assert git(alice, "rev-parse", "HEAD^{tree}") == git(bob, "rev-parse", "HEAD^{tree}")
    res = ckpt(bob, "verify-commit", "HEAD", rc=1)
    assert res.out == (f"HEAD ({head[:12]}): not verified: checkpoint origin:gated/1 has this tree, but required verifier "
                       "tests has no result (only a fetched result says passed: results recorded elsewhere are not evidence here)\n"
                       "hint: git ckpt verify origin:gated/1 --isolated records the missing result here\n")
    assert ckpt(bob, "verify-commit", "HEAD", "--json", rc=1).json()["result"][0]["fix"] == "git ckpt verify origin:gated/1 --isolated"
    # the hint works as printed; the checkpoint is promoted on origin, not here, and says so
    ckpt(bob, "verify", "origin:gated/1", "--isolated")
    assert ckpt(bob, "verify-commit", "HEAD").out == (
        f"HEAD ({head[:12]}): verified: tree of checkpoint origin:gated/1 (promoted on origin)\n")
    # a local promoted checkpoint is "(promoted)", as before
    ckpt(bob, "save", "-m", "mine")
    ckpt(bob, "verify")
    assert ckpt(bob, "verify-commit", "HEAD").out == f"HEAD ({head[:12]}): verified: tree of checkpoint default/1 (promoted)\n"


def test_verify_commit_hints_each_checkpoint_once_over_a_range(repo):
    _trusted_required(repo, "false")
    base = git(repo, "rev-parse", "HEAD").decode().strip()
    ckpt(repo, "save", "-m", "config")
    for n in range(2):
        (repo / "f").write_text(f"{n}\n")
        ckpt(repo, "save", "-m", f"f {n}")
        git(repo, "add", "f")
        git(repo, "commit", "-qm", f"f {n}")
    res = ckpt(repo, "verify-commit", f"{base}~1..HEAD", rc=1)
    hints = [ln for ln in res.out.splitlines() if ln.startswith("hint: ")]
    assert hints == ["hint: git ckpt verify default/3 --isolated records the missing result here",
                     "hint: git ckpt verify default/2 --isolated records the missing result here",
                     "hint: git ckpt verify default/1 --isolated records the missing result here"]


def _message(repo) -> str:
    return ckpt(repo, "show", "@", "--json").json()["result"]["manifest"]["message"]


def test_default_message_when_only_head_differs_says_how(repo):
    (repo / "f").write_text("f\n")
    ckpt(repo, "save", "-m", "f")
    git(repo, "add", "f")
    git(repo, "commit", "-qm", "f")
    first = git(repo, "rev-parse", "HEAD").decode().strip()
    ckpt(repo, "save")
    assert _message(repo) == f"default/1 committed as {first[:12]}"
    for n in range(2):  # the second's parent is not default/2's base (the first commits default/2 on it)
        git(repo, "commit", "-q", "--allow-empty", "-m", f"empty {n}")
    moved = git(repo, "rev-parse", "HEAD").decode().strip()
    ckpt(repo, "save")
    assert _message(repo) == f"HEAD moved to {moved[:12]}"
    # another task's checkpoint restored onto this HEAD: HEAD did not move, the files came from it
    ckpt(repo, "task", "start", "other")
    ckpt(repo, "restore", "default/1")  # saved on the first commit; restored onto `moved`
    ckpt(repo, "save")
    assert _message(repo) == f"files of default/1 on HEAD {moved[:12]}"
    assert ckpt(repo, "list").out.splitlines()[-1].endswith(f"manual      files of default/1 on HEAD {moved[:12]}")


def test_init_says_the_next_step(repo):
    res = ckpt(repo, "init")
    assert res.out == (f"wrote {repo / '.ckpt.toml'}\n"
                       "next: name your test commands as [[verifier]] entries in .ckpt.toml, then git ckpt trust"
                       " (verifiers run only from a .ckpt.toml you trusted, byte for byte)\n")


@pytest.mark.parametrize("spell", ["file://{p}", "file://{p}/", "file://localhost{p}", "{p}/", "{p}/../shared.git"])
@pytest.mark.parametrize("command", ["push", "fetch"])
def test_a_remote_url_in_any_spelling_is_answered_with_its_name(tmp_path, spell, command):
    _alice, bob = _two_people(tmp_path, saves=1)
    url = spell.format(p=tmp_path / "shared.git")
    res = ckpt(bob, command, url, rc=2)
    assert res.err == f"error: {url!r} is not a configured remote\nhint: that is the URL of remote origin; name the remote instead\n"


@pytest.mark.parametrize("url", ["file://elsewhere/tmp/x", "file:///nonexistent/dir", "https://example.invalid/r.git"])
def test_a_url_of_no_remote_gets_the_generic_hint(tmp_path, url):
    _alice, bob = _two_people(tmp_path, saves=1)
    res = ckpt(bob, "fetch", url, rc=2)
    assert res.err.splitlines()[1] == ("hint: git ckpt pushes and fetches through a named remote: git remote add NAME URL "
                                       "adds one (git remote -v lists them)")


@pytest.mark.parametrize("before", ["nothing", "failed"])
def test_handoff_check_calls_a_failing_required_verifier_drift(repo, before):
    _trusted_required(repo, "false")
    ckpt(repo, "save", "-m", "s")
    if before == "failed":
        ckpt(repo, "verify", rc=1)
    js = ckpt(repo, "handoff", "--check", "--json", rc=1).json()["result"]
    recorded = "" if before == "nothing" else "recorded failed, "
    assert js["ok"] is False and js["drift"] == [f"verifier tests: {recorded}re-run failed"]
    # the re-run recorded its failure: a second check says so, and is drift again
    res = ckpt(repo, "handoff", "--check", rc=1)
    assert "DRIFT verifier tests: re-run: failed (recorded), before: failed\n" in res.out
    assert "no drift" not in res.out


def test_a_committed_checkpoint_edited_since_is_still_committed_by_head(repo):
    (repo / "f").write_text("f\n")
    ckpt(repo, "save", "-m", "f")
    git(repo, "add", "f")
    git(repo, "commit", "-qm", "f")
    head = git(repo, "rev-parse", "HEAD").decode().strip()
    (repo / "f").write_text("edited\n")
    out = ckpt(repo, "status").out
    assert "worktree:  changed since default/1 (@)\n" in out
    assert f"HEAD:      {head[:12]} commits default/1 on its base" in out and "not where" not in out
    wt = ckpt(repo, "status", "--json").json()["result"]["worktree"]
    assert (wt["differs"], wt["head_commits"], wt["exact"]) == (["files", "HEAD"], True, False)
    assert "Workspace: changed since default/1 (files differ; HEAD commits default/1 on its base)" in ckpt(repo, "handoff").out


@pytest.mark.parametrize("since", ["--all", "-q", "--git-dir=/tmp", "--output=x"])
def test_an_option_like_since_is_a_revision_never_an_option(repo, since):
    """Review of the gate's ``since``: every revision git ckpt resolves goes through one
    ``rev-parse --verify --end-of-options`` (gitcore ``commit_of``), so a value that looks like an
    option is an unknown revision, from ``hooks install --since`` and from ``ckpt.gate.since``
    alike (retention then exempts nothing rather than failing)."""
    res = ckpt(repo, "hooks", "install", f"--since={since}", rc=4)
    assert res.err == f"error: unknown revision {since!r}\nhint: name a commit, e.g. HEAD or origin/main\n"
    assert not (repo / "x").exists()
    ckpt(repo, "hooks", "install")
    git(repo, "config", "ckpt.gate.since", since)
    (repo / "f").write_text("f\n")
    git(repo, "add", "f")
    git(repo, "commit", "-q", "--no-verify", "-m", "f")
    res = ckpt(repo, "verify-commit", "--pre-push", "origin", input=b"refs/heads/main " + git(repo, "rev-parse", "HEAD").strip()
               + b" refs/heads/main " + b"0" * 40 + b"\n", rc=6)
    assert res.err.splitlines()[0] == f"error: ckpt.gate.since names {since!r}, which is not a commit here"
    ckpt(repo, "save", "-m", "s")
    assert ckpt(repo, "gc", "--keep", "0", "--older-than", "0s", "--dry-run").err == ""
