"""What ``git ckpt fetch`` takes from a remote's ``refs/ckpt/``, and what a fetch leaves behind.

A remote is written by anyone who can push to it: ``fetch`` brings only the names git ckpt reads
(``refs/ckpt/T/N``, ``T/log``, ``T/promoted``), says what it left alone, clears a stale fetched
ref that clashes with a fetched name (a ref and a directory of refs of the same name) instead of
failing every later fetch, keeps its ledger event small whatever the remote holds, and carries
git's whole message, with a hint that fits it, when git fails.  Real bare remote, real git, the
real CLI.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from conftest import ckpt, git, with_remote

NOT_FETCHED = "naming no checkpoint, ledger or promotion (refs/ckpt/T/N, T/log, T/promoted)"
CLASH = "needs its place (a ref and a directory of refs cannot share a name)"


def _team(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A bare remote, the victim's clone (``alice``, who runs git ckpt) and a clone whose owner
    writes whatever refs they like with plain git (``mallory``).  Returns ``(bare, vic, att)``."""
    bare, vic = with_remote(tmp_path)
    att = tmp_path / "mallory"
    git(tmp_path, "clone", "-q", str(bare), str(att))
    return bare, vic, att


def _commit(repo: Path, text: str) -> str:
    """A new commit on ``repo``'s HEAD (so its object is on no other clone); returns its id."""
    (repo / "f.txt").write_text(text)
    git(repo, "add", "f.txt")
    git(repo, "commit", "-qm", text)
    return git(repo, "rev-parse", "HEAD").decode().strip()


def _refs(repo: Path, *patterns: str) -> list[str]:
    out = git(repo, "for-each-ref", "--format=%(refname)", *patterns).decode()
    return out.splitlines()


def _push(att: Path, *specs: str) -> None:
    git(att, "push", "-q", "origin", *specs)


def _new(name: str) -> str:
    return f"new        refs/ckpt/{name}\nfetched 1 ref(s) from origin; checkpoints: origin:{name}\n"


def _ignored(*names: str) -> str:
    count = f"{len(names)} ref" + ("s" if len(names) != 1 else "")
    return f"not fetched: {count} on origin {NOT_FETCHED}: {', '.join('refs/ckpt/' + n for n in names)}\n"


def _event(repo: Path, task: str) -> dict:
    return json.loads(git(repo, "cat-file", "blob", f"refs/ckpt/{task}/log:event.json"))


# ------------------------------------------------------------------------ the faults as reported


def test_a_checkpoint_number_with_a_path_below_it_is_not_fetched_and_blocks_nothing(tmp_path):
    """Fault 5: ``refs/ckpt/feat/2/x`` was fetched, then the remote's ``feat/2`` could never
    be (exit 10, git's sentence cut, a hint blaming the network)."""
    _bare, vic, att = _team(tmp_path)
    x = _commit(att, "x")
    _push(att, "HEAD:refs/ckpt/feat/2/x")
    res = ckpt(vic, "fetch")
    assert (res.out, res.err) == (_ignored("feat/2/x") + "nothing new on origin\n", "")
    assert _refs(vic, "refs/ckpt-remotes") == []
    # left out of git's fetch itself: not even its objects came
    assert subprocess.run(["git", "cat-file", "-e", x], cwd=vic, stderr=subprocess.DEVNULL).returncode != 0
    _push(att, ":refs/ckpt/feat/2/x", "HEAD:refs/ckpt/feat/2")
    res = ckpt(vic, "fetch")
    assert (res.out, res.err) == (_new("feat/2"), "")
    assert _refs(vic, "refs/ckpt-remotes") == ["refs/ckpt-remotes/origin/feat/2"]
    assert ckpt(vic, "fetch").out == "nothing new on origin\n"


def test_many_long_names_are_left_out_and_the_event_stays_small(tmp_path):
    """Fault 4: 400 refs of 2,900-character names under ``refs/ckpt/feat/`` made the fetch
    event too large for the ledger; the fetch failed (exit 2, "shorten the note") after it had
    fetched everything."""
    _bare, vic, att = _team(tmp_path)
    head = git(att, "rev-parse", "HEAD").decode().strip()
    deep = ("a" * 240 + "/") * 12
    names = [f"feat/{deep}r{i}" for i in range(1, 401)]
    git(att, "update-ref", "--stdin", input="".join(f"create refs/ckpt/{n} {head}\n" for n in names).encode())
    _push(att, "refs/ckpt/*:refs/ckpt/*")
    ckpt(vic, "task", "start", "mine")
    tip = git(vic, "rev-parse", "refs/ckpt/mine/log")
    res = ckpt(vic, "fetch")
    first = sorted("refs/ckpt/" + n for n in names)[:3]
    shown = ", ".join(f"{n[:41]}...{n[-36:]}" for n in first)
    assert (res.out, res.err) == (f"not fetched: 400 refs on origin {NOT_FETCHED}: {shown} and 397 more\n"
                                  "nothing new on origin\n", "")
    assert _refs(vic, "refs/ckpt-remotes") == []
    assert git(vic, "rev-parse", "refs/ckpt/mine/log") == tip  # nothing changed: no event
    # with a checkpoint among them: fetched, recorded, the event counts the rest
    _push(att, "HEAD:refs/ckpt/feat/1")
    res = ckpt(vic, "fetch", "--json")
    out = res.json()["result"]
    assert out["ignored"] == sorted("refs/ckpt/" + n for n in names)
    assert [(r["ref"], r["status"]) for r in out["refs"]] == [("refs/ckpt/feat/1", "new")]
    assert out["checkpoints"] == ["origin:feat/1"] and out["removed"] == [] and out["warnings"] == []
    ev = _event(vic, "mine")
    assert ev["type"] == "fetch"
    assert ev["data"] == {"remote": "origin", "tasks": {"feat": {"checkpoints": "1", "refs": []}},
                          "notes_added": 0, "ignored": 400}
    assert _refs(vic, "refs/ckpt-remotes") == ["refs/ckpt-remotes/origin/feat/1"]


# ------------------------------------------------------------------------ a ref, then a directory of the same name


@pytest.mark.parametrize("first, second", [
    ("feat/2/x", "feat/2"),  # checkpoint level: the directory first, then the ref
    ("feat/2", "feat/2/x"),  # checkpoint level: the ref first, then the directory
    ("feat", "feat/1"),      # task level: a ref named like the task, then a checkpoint
    ("feat/1", "feat"),      # task level: a checkpoint, then a ref named like the task
])
def test_a_ref_and_a_directory_of_the_same_name_one_after_the_other(tmp_path, first, second):
    """Only ``T/N``, ``T/log`` and ``T/promoted`` are fetched, and no two such names clash, so
    whichever comes first, the other never blocks a fetch; a fetched checkpoint the remote
    dropped stays fetched (fetch never prunes)."""
    _bare, vic, att = _team(tmp_path)
    _commit(att, "x")
    valid = {"feat/2", "feat/1"}

    def said(name: str) -> str:
        return _new(name) if name in valid else _ignored(name) + "nothing new on origin\n"

    _push(att, f"HEAD:refs/ckpt/{first}")
    res = ckpt(vic, "fetch")
    assert (res.out, res.err) == (said(first), "")
    _push(att, f":refs/ckpt/{first}")
    _push(att, f"HEAD:refs/ckpt/{second}")
    res = ckpt(vic, "fetch")
    assert (res.out, res.err) == (said(second), "")
    assert _refs(vic, "refs/ckpt-remotes") == [f"refs/ckpt-remotes/origin/{n}" for n in (first, second) if n in valid]
    again = ckpt(vic, "fetch").out
    assert again == ("" if second in valid else _ignored(second)) + "nothing new on origin\n"


@pytest.mark.parametrize("stale, incoming", [
    ("feat/2/x", "feat/2"),      # fetched by an older git ckpt: a directory where feat/2 goes
    ("feat/1/a/b", "feat/1"),    # deeper
    ("feat", "feat/1"),          # a ref where the task's directory goes
])
def test_a_stale_fetched_ref_in_the_way_is_removed_and_said(tmp_path, stale, incoming):
    """A remote-tracking ref that clashes with a fetched name (left by an older git ckpt, which
    fetched every name, or by another tool) is deleted first, and the output says which, what
    it held and why; before, every fetch failed (``git remote prune`` does not reach it)."""
    _bare, vic, att = _team(tmp_path)
    old = git(vic, "rev-parse", "HEAD").decode().strip()
    git(vic, "update-ref", f"refs/ckpt-remotes/origin/{stale}", old)
    git(vic, "update-ref", "refs/ckpt-remotes/origin/other/3", old)  # a dropped checkpoint: kept
    _commit(att, "x")
    _push(att, f"HEAD:refs/ckpt/{incoming}")
    ckpt(vic, "task", "start", "mine")
    res = ckpt(vic, "fetch")
    assert res.err == ""
    assert res.out == (f"removed    refs/ckpt-remotes/origin/{stale} (was {old[:12]}): origin no longer has it, and "
                       f"refs/ckpt/{incoming} from origin {CLASH}\n" + _new(incoming))
    assert _refs(vic, "refs/ckpt-remotes") == ["refs/ckpt-remotes/origin/feat/" + incoming.rpartition("/")[2],
                                               "refs/ckpt-remotes/origin/other/3"]
    ev = _event(vic, "mine")["data"]
    assert ev["removed"] == [f"refs/ckpt-remotes/origin/{stale}"] and ev["removed_count"] == 1
    assert ckpt(vic, "fetch").out == "nothing new on origin\n"


def test_a_stale_fetched_ref_in_the_way_json(tmp_path):
    _bare, vic, att = _team(tmp_path)
    old = git(vic, "rev-parse", "HEAD").decode().strip()
    git(vic, "update-ref", "refs/ckpt-remotes/origin/feat/2/x", old)
    new = _commit(att, "x")
    _push(att, "HEAD:refs/ckpt/feat/2", "HEAD:refs/ckpt/feat/2x/y")
    res = ckpt(vic, "fetch", "--json")
    assert res.err == ""
    assert res.json() == {"schema": "ckpt/1", "command": "fetch", "result": {
        "remote": "origin",
        "refs": [{"ref": "refs/ckpt/feat/2", "old": None, "new": new, "status": "new", "reason": ""}],
        "checkpoints": ["origin:feat/2"],
        "notes": {"kind": "none", "commit": None, "added": 0, "problem": None},
        "ignored": ["refs/ckpt/feat/2x/y"],
        "removed": [{"ref": "refs/ckpt-remotes/origin/feat/2/x", "old": old, "new": None, "status": "removed",
                     "reason": f"origin no longer has it, and refs/ckpt/feat/2 from origin {CLASH}"}],
        "warnings": [],
    }}


def test_a_dropped_checkpoint_stays_fetched(tmp_path):
    """Why fetch never prunes: a checkpoint a teammate later deleted on the remote is still
    ``origin:T/N`` here (show, restore, the views that mark what is gone)."""
    _bare, vic, att = _team(tmp_path)
    a = _commit(att, "a")
    _push(att, "HEAD:refs/ckpt/feat/1")
    b = _commit(att, "b")
    _push(att, "HEAD:refs/ckpt/feat/2")
    assert ckpt(vic, "fetch").out.endswith("fetched 2 ref(s) from origin; checkpoints: origin:feat/1, origin:feat/2\n")
    _push(att, ":refs/ckpt/feat/1")
    assert ckpt(vic, "fetch").out == "nothing new on origin\n"
    assert git(vic, "for-each-ref", "--format=%(objectname) %(refname)", "refs/ckpt-remotes").decode().splitlines() == [
        f"{a} refs/ckpt-remotes/origin/feat/1", f"{b} refs/ckpt-remotes/origin/feat/2"]


def test_names_no_refspec_can_spell_are_not_fetched(tmp_path):
    """A name outside plain ASCII (a task name git ckpt refuses): a few new refs go by name,
    so it is never even asked for."""
    _bare, vic, att = _team(tmp_path)
    _push(att, "HEAD:refs/ckpt/t\u00e2che/1", "HEAD:refs/ckpt/ok/1")
    res = ckpt(vic, "fetch")
    assert res.out == "new        refs/ckpt/ok/1\nfetched 1 ref(s) from origin; checkpoints: origin:ok/1\n" + _ignored("t\u00e2che/1")
    assert _refs(vic, "refs/ckpt-remotes") == ["refs/ckpt-remotes/origin/ok/1"]


def _many(att: Path, task: str, count: int) -> None:
    """``count`` refs ``refs/ckpt/TASK/1..count`` on the remote (more than fetch names one by one)."""
    head = git(att, "rev-parse", "HEAD").decode().strip()
    git(att, "update-ref", "--stdin", input="".join(f"create refs/ckpt/{task}/{n} {head}\n" for n in range(1, count + 1)).encode())
    _push(att, f"refs/ckpt/{task}/*:refs/ckpt/{task}/*")


def test_many_new_refs_go_by_one_wildcard_and_still_only_checkpoint_names_stay(tmp_path):
    """Over 500 new refs: one wildcard refspec, the other names left out by negative refspecs;
    a name none can spell arrives and is deleted at once; a stale fetched ref in the way of
    one that arrives is removed first.  Nothing but checkpoint names stays."""
    _bare, vic, att = _team(tmp_path)
    head = git(vic, "rev-parse", "HEAD").decode().strip()
    git(vic, "update-ref", "refs/ckpt-remotes/origin/big/7/x", head)  # as an older git ckpt left it
    git(vic, "update-ref", "refs/ckpt-remotes/origin/t\u00e2che", head)
    x = _commit(att, "x")
    _push(att, "HEAD:refs/ckpt/bag/2/x", "HEAD:refs/ckpt/t\u00e2che/1", "HEAD:refs/ckpt/junk", "HEAD:refs/ckpt/123/1")
    _commit(att, "y")
    _many(att, "big", 600)
    res = ckpt(vic, "fetch")
    lines = res.out.splitlines()
    assert res.err == ""
    assert lines[:2] == [
        f"removed    refs/ckpt-remotes/origin/big/7/x (was {head[:12]}): origin no longer has it, and refs/ckpt/big/7 "
        f"from origin {CLASH}",
        f"removed    refs/ckpt-remotes/origin/t\u00e2che (was {head[:12]}): origin no longer has it, and "
        f"refs/ckpt/t\u00e2che/1 from origin {CLASH}"]
    assert lines[2] == "new        refs/ckpt/big/1" and lines[-2].startswith("fetched 600 ref(s) from origin; checkpoints: ")
    assert lines[-1] == (f"not fetched: 4 refs on origin {NOT_FETCHED}: refs/ckpt/123/1, refs/ckpt/bag/2/x, "
                         "refs/ckpt/junk and 1 more")
    assert _refs(vic, "refs/ckpt-remotes") == sorted(f"refs/ckpt-remotes/origin/big/{n}" for n in range(1, 601))
    ignored = ckpt(vic, "fetch", "--json").json()["result"]["ignored"]
    assert ignored == ["refs/ckpt/123/1", "refs/ckpt/bag/2/x", "refs/ckpt/junk", "refs/ckpt/t\u00e2che/1"]
    assert ckpt(vic, "fetch").out == (f"not fetched: 4 refs on origin {NOT_FETCHED}: refs/ckpt/123/1, refs/ckpt/bag/2/x, "
                                      "refs/ckpt/junk and 1 more\nnothing new on origin\n")
    assert subprocess.run(["git", "cat-file", "-e", x], cwd=vic, stderr=subprocess.DEVNULL).returncode == 0  # the tâche ref brought it


def test_many_new_refs_never_clash_with_a_fetched_checkpoint_the_remote_dropped(tmp_path):
    """The reverse: a fetched ``feat/2`` the remote dropped for ``feat/2/x``; over 500 new refs
    go by one wildcard, whose negative refspec for ``feat/2/*`` is kept even beyond the 1,000
    negative refspecs a fetch writes (1,000 other names sort before it), so neither
    ``feat/2/x`` nor its objects come; the name left over arrives and is deleted at once."""
    _bare, vic, att = _team(tmp_path)
    _commit(att, "x")
    _push(att, "HEAD:refs/ckpt/feat/2")
    ckpt(vic, "fetch")
    x = _commit(att, "x2")
    _push(att, ":refs/ckpt/feat/2")
    _push(att, "HEAD:refs/ckpt/feat/2/x")
    git(att, "reset", "-q", "--hard", "HEAD~1")
    head = git(att, "rev-parse", "HEAD").decode().strip()
    git(att, "update-ref", "--stdin", input="".join(f"create refs/ckpt/a{i:04d} {head}\n" for i in range(1000)).encode())
    _push(att, "refs/ckpt/a*:refs/ckpt/a*")
    _many(att, "big", 501)
    res = ckpt(vic, "fetch")
    assert res.err == ""
    assert res.out.splitlines()[-2:] == [
        "fetched 501 ref(s) from origin; checkpoints: origin:big/1, origin:big/2, origin:big/3, origin:big/4, origin:big/5, "
        "origin:big/6, ...",
        f"not fetched: 1001 refs on origin {NOT_FETCHED}: refs/ckpt/a0000, refs/ckpt/a0001, refs/ckpt/a0002 and 998 more"]
    assert _refs(vic, "refs/ckpt-remotes") == sorted(["refs/ckpt-remotes/origin/feat/2"] +
                                                     [f"refs/ckpt-remotes/origin/big/{n}" for n in range(1, 502)])
    assert subprocess.run(["git", "cat-file", "-e", x], cwd=vic, stderr=subprocess.DEVNULL).returncode != 0


# ------------------------------------------------------------------------ the ledger event is bounded


def test_the_fetch_event_names_at_most_50_tasks(tmp_path):
    _bare, vic, att = _team(tmp_path)
    head = git(att, "rev-parse", "HEAD").decode().strip()
    tasks = [f"t{i:02d}" + "x" * 97 for i in range(60)]  # 100 characters: the longest task name
    git(att, "update-ref", "--stdin", input="".join(
        f"create refs/ckpt/{t}/{n} {head}\n" for t in tasks for n in (1, 3, 5)).encode())
    _push(att, "refs/ckpt/*:refs/ckpt/*")
    ckpt(vic, "task", "start", "mine")
    res = ckpt(vic, "fetch")
    assert res.out.splitlines()[-1].startswith("fetched 180 ref(s) from origin; checkpoints: ")
    data = _event(vic, "mine")["data"]
    assert list(data["tasks"]) == tasks[:50] and data["tasks_omitted"] == 10
    assert data["tasks"][tasks[0]] == {"checkpoints": "1,3,5", "refs": []}


def test_the_push_event_lists_at_most_100_ranges(tmp_path):
    """The same bound on push (and push-failed): numbers that never run on are counted."""
    _bare, vic, _att = _team(tmp_path)
    ckpt(vic, "task", "start", "many")
    (vic / "README").write_text("changed\n")
    ckpt(vic, "save", "-m", "one")
    cp = git(vic, "rev-parse", "refs/ckpt/many/1").decode().strip()
    git(vic, "update-ref", "--stdin", input="".join(f"create refs/ckpt/many/{n} {cp}\n" for n in range(3, 604, 2)).encode())
    ckpt(vic, "push")
    data = _event(vic, "many")["data"]
    assert data["checkpoints"] == ",".join(str(n) for n in range(1, 201, 2)) and data["checkpoints_omitted"] == 202
    assert data["refs"] == ["refs/ckpt/many/log"]


def test_an_unreadable_ledger_is_a_warning_after_a_fetch_that_was_done(tmp_path):
    _bare, vic, att = _team(tmp_path)
    ckpt(vic, "task", "start", "mine")
    empty = git(vic, "mktree", input=b"").decode().strip()
    bad = git(vic, "commit-tree", empty, "-m", "not a ledger entry").decode().strip()
    git(vic, "update-ref", "refs/ckpt/mine/log", bad)
    _push(att, "HEAD:refs/ckpt/feat/1")
    res = ckpt(vic, "fetch", fsck=False)
    assert res.out == _new("feat/1")
    assert res.err.startswith("warning: ") and res.err.endswith(
        "the fetch was done but not logged (git ckpt log --verify --task mine names the damage)\n")
    assert _refs(vic, "refs/ckpt-remotes") == ["refs/ckpt-remotes/origin/feat/1"]


# ------------------------------------------------------------------------ git's failures, whole


def test_a_failed_git_fetch_carries_the_whole_message_and_a_hint_that_fits(tmp_path):
    _bare, vic, att = _team(tmp_path)
    git(att, "notes", "--ref=ckpt", "add", "-m", "{}", "HEAD")
    _push(att, "refs/notes/ckpt")
    git(vic, "update-ref", "refs/notes/ckpt-remotes/origin/x", "HEAD")  # in the way of the notes
    res = ckpt(vic, "fetch", rc=10)
    err = res.err.splitlines()
    assert len(err) == 2 and err[0].startswith("error: git fetch failed: ")
    # git 2.39 names the ref first ("cannot lock ref ..."); both end with git's whole sentence
    assert err[0].endswith("some local refs could not be updated; try running 'git remote prune origin' "
                           "to remove any old, conflicting branches")
    assert err[1] == ("hint: a ref of this repository is in the way of one from origin (a ref and a directory of refs of "
                      "the same name): find it with git for-each-ref refs/ckpt-remotes/origin/ refs/notes/ckpt-remotes/, "
                      "delete it with git update-ref -d REF if you do not need it, and run it again (git remote prune, "
                      "which git suggests, does not reach these refs)")
    res = ckpt(vic, "fetch", "--json", rc=10)
    assert res.json()["error"]["message"] == err[0].removeprefix("error: ")
    git(vic, "update-ref", "-d", "refs/notes/ckpt-remotes/origin/x")
    assert ckpt(vic, "fetch").out == "merged 1 result line(s) from origin into refs/notes/ckpt\n"


def test_an_unreachable_remote_says_so_whole(tmp_path):
    _bare, vic, _att = _team(tmp_path)
    gone = tmp_path / "gone.git"
    git(vic, "remote", "add", "gone", str(gone))
    res = ckpt(vic, "fetch", "gone", rc=10)
    assert res.err == (f"error: git ls-remote failed: '{gone}' does not appear to be a git repository; Could not read "
                       "from remote repository. Please make sure you have the correct access rights and the repository exists.\n"
                       "hint: check the remote's URL, your network and credentials (git remote -v)\n")


# ------------------------------------------------------------------------ the pieces, in-process


def test_fetchable_names():
    from git_ckpt.remote import fetchable

    assert all(fetchable(f"refs/ckpt/{n}") for n in ("feat/1", "feat/log", "feat/promoted", "a.b_c-d/999999999"))
    assert not any(fetchable(f"refs/ckpt/{n}") for n in (
        "feat", "feat/2/x", "feat/007", "feat/0", "feat/1000000000", "feat/x", "123/1", "a..b/1", "x.lock/1",
        "$(rm)/1", "t\u00e2che/1", "feat/log/1", "f" * 101 + "/1"))
    assert not fetchable("refs/heads/main") and not fetchable("refs/ckpt-remotes/o/feat/1")


def test_exclusions_never_cover_a_fetchable_name():
    from git_ckpt.remote import _exclusion

    assert _exclusion("refs/ckpt/feat/2/x") == "refs/ckpt/feat/2/*"
    assert _exclusion("refs/ckpt/feat/2/x/y") == "refs/ckpt/feat/2/*"
    assert _exclusion("refs/ckpt/feat") == "refs/ckpt/feat"
    assert _exclusion("refs/ckpt/feat/x") == "refs/ckpt/feat/x"
    assert _exclusion("refs/ckpt/123/1") == "refs/ckpt/123/*"  # an all-digit name is no task
    assert _exclusion("refs/ckpt/t\u00e2che/1") is None
    assert _exclusion("refs/ckpt/a/b*c") is None and _exclusion("refs/ckpt/a:b") is None
    assert _exclusion("refs/ckpt/.x/1") is None and _exclusion("refs/ckpt/x.lock/1") is None


def test_clashes():
    from git_ckpt.remote import _clashes

    p = "refs/ckpt-remotes/o/"
    have = {p + n for n in ("feat/2/x", "feat/3", "feat", "other/1", "feat/1/a/b")}
    assert _clashes(have, {p + "feat/2", p + "feat/1", p + "other/1"}) == {
        p + "feat/2/x": p + "feat/2", p + "feat": p + "feat/1", p + "feat/1/a/b": p + "feat/1"}
    assert _clashes(have, set()) == {}


def test_ledger_summaries_are_bounded_however_many_names():
    from git_ckpt.model import MAX_EVENT, encode
    from git_ckpt.notes import NotesMerge
    from git_ckpt.remote import FetchResult, RefUpdate, fetch_event, ref_summary

    refs = [f"refs/ckpt/t/{n}" for n in range(1, 200_000, 2)] + [f"refs/ckpt/t/{'x' * 3000}{i}" for i in range(50)]
    s = ref_summary(refs, "refs/ckpt/t/")
    assert s["checkpoints"] == ",".join(str(n) for n in range(1, 200, 2)) and s["checkpoints_omitted"] == 100_000 - 100
    assert len(s["refs"]) == 10 and all(len(r) == 256 and r.endswith("...") for r in s["refs"]) and s["refs_omitted"] == 40
    assert ref_summary(["refs/ckpt/t/1", "refs/ckpt/t/2", "refs/ckpt/t/log"], "refs/ckpt/t/") == {
        "checkpoints": "1-2", "refs": ["refs/ckpt/t/log"]}
    ups = [RefUpdate(f"refs/ckpt/{'t' * 96}{i:04d}/{n}", None, "0" * 40, "new") for i in range(2000) for n in range(1, 400, 2)]
    removed = [RefUpdate(f"refs/ckpt-remotes/o/{'y' * 4000}/{i}", "1" * 40, None, "removed") for i in range(100)]
    res = FetchResult("o", ups, NotesMerge(), [f"refs/ckpt/{'z' * 4000}/{i}" for i in range(1000)], removed)
    data = fetch_event(res)
    assert len(data["tasks"]) == 50 and data["tasks_omitted"] == 1950 and data["ignored"] == 1000
    assert len(data["removed"]) == 10 and data["removed_count"] == 100
    assert len(encode(data)) < MAX_EVENT // 4


def test_git_messages_are_joined_whole_and_bounded():
    from git_ckpt.remote import _git_message, failure_hint

    def proc(err: str, rc: int = 128) -> subprocess.CompletedProcess[bytes]:
        return subprocess.CompletedProcess(["git"], rc, b"", err.encode())

    p = proc("remote: Counting objects\nerror: some local refs could not be updated; try running\n"
             " 'git remote prune origin' to remove any old, conflicting branches\n")
    assert _git_message(p) == ("some local refs could not be updated; try running 'git remote prune origin' "
                               "to remove any old, conflicting branches")
    assert failure_hint(p, "origin").startswith("a ref of this repository is in the way of one from origin")
    p = proc("fatal: 'x' does not appear to be a git repository\nfatal: Could not read from remote repository.\n\n"
             "Please make sure you have the correct access rights\nand the repository exists.\n")
    assert _git_message(p) == ("'x' does not appear to be a git repository; Could not read from remote repository. "
                               "Please make sure you have the correct access rights and the repository exists.")
    assert failure_hint(p, "origin") == "check the remote's URL, your network and credentials (git remote -v)"
    # what a server says is shown, but never picks the hint
    p = proc("remote: fatal: Could not resolve host\nfatal: the remote end sent a bad pack\n")
    assert failure_hint(p, "o") == "that is git's own message about o; fix what it names and run it again (git remote -v shows the URL)"
    assert _git_message(proc("error: " + "y" * 10_000)) == "y" * 2000 + " ..."
    assert _git_message(proc("", 1)) == "exit 1"
    lock = proc("error: Unable to create '/r/.git/refs/ckpt-remotes/o/t/1.lock': File exists.\n\nAnother git process seems to be running")
    assert failure_hint(lock, "o").startswith("another git command holds a lock in this repository")
    assert failure_hint(proc("fatal: write error: No space left on device"), "o").startswith("free disk space")
