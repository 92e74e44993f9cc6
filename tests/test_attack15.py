"""What the attack pass on the fourteenth walkthrough's changes found, each as its kind: a
manifest written beyond the bounds its reader enforces (an unreadable checkpoint: the restore it
preceded lost data), identities git accepts and libgit2 refuses, a merge message a restore
replaced without saving it, MERGE_HEAD naming what is no commit, and the user's own
info/exclude treated as git ckpt's state.

Real repositories, the real ``git ckpt`` entry point, crafted objects written with plumbing.
"""

from __future__ import annotations

import json
import os

import pytest

from conftest import ckpt, forge_checkpoint, git


def _env(**kw: str) -> dict[str, str]:
    return {**os.environ, **kw}


# -- a manifest field is written within the bound its reader enforces -------------------------------

@pytest.mark.parametrize("env", [
    {"GIT_AUTHOR_NAME": "n" * 1100},
    {"GIT_AUTHOR_EMAIL": "e" * 1100 + "@x"},
    {"GIT_AUTHOR_NAME": "n" * 600, "GIT_AUTHOR_EMAIL": "e" * 600 + "@x"},
])
def test_a_long_identity_never_makes_an_unreadable_checkpoint(repo, env):
    """A 1100-character name made save write an author the manifest reader refuses: the
    pre-restore checkpoint of the restore that followed could not be read, and undo could not
    bring back what that restore deleted."""
    (repo / "f.txt").write_text("1\n")
    ckpt(repo, "save", "-m", "clean")
    (repo / "precious.txt").write_text("precious\n")
    ckpt(repo, "restore", "default/1", env=_env(**env))
    assert not (repo / "precious.txt").exists()
    author = ckpt(repo, "show", "default/2", "--json").json()["result"]["manifest"]["author"]
    assert len(author) == 1024 and author.endswith("…")
    ckpt(repo, "check", "--all")
    ckpt(repo, "undo")
    assert (repo / "precious.txt").read_text() == "precious\n"


FIELD = {"-m": "message", "--next": "next", "--hypothesis": "hypothesis"}


@pytest.mark.parametrize("option", list(FIELD))
def test_a_text_over_its_bound_is_refused_before_anything_is_saved(repo, option):
    (repo / "f.txt").write_text("1\n")
    res = ckpt(repo, "save", option, "m" * 65537, rc=2)
    assert res.err == ("error: nothing saved: the checkpoint's manifest would not read back (Expected `str` of length "
                       f"<= 65536 - at `$.{FIELD[option]}`)\n"
                       "hint: a message, --next or --hypothesis is at most 65536 characters\n")
    assert git(repo, "for-each-ref", "refs/ckpt/") == b""
    ckpt(repo, "save", option, "m" * 65536)


@pytest.mark.parametrize("env", [
    {"GIT_AUTHOR_EMAIL": "", "GIT_COMMITTER_EMAIL": ""},
    {"GIT_AUTHOR_EMAIL": ".", "GIT_COMMITTER_EMAIL": "."},
    {"GIT_AUTHOR_EMAIL": " \t", "GIT_COMMITTER_EMAIL": " "},
])
def test_an_identity_git_accepts_and_libgit2_refuses_still_saves_and_logs(repo, env):
    """git writes an empty e-mail (user.email "" or only characters it strips; which it strips
    depends on git's version: 2.39 strips a lone ".", 2.55 keeps it); libgit2 refuses an empty
    one: save failed as 'damage' and a restore went unlogged, so undo found nothing.  The
    checkpoint's author is git's (``git var``), with the placeholder only for an empty e-mail."""
    ident = git(repo, "var", "GIT_AUTHOR_IDENT", env=_env(**env)).decode()
    email = ident[ident.index("<") + 1:ident.index(">")]
    (repo / "f.txt").write_text("1\n")
    ckpt(repo, "save", "-m", "one", env=_env(**env))
    assert git(repo, "log", "-1", "--format=%an <%ae>", "refs/ckpt/default/1").decode().strip() == \
        f"Test User <{email.strip() or 'git-ckpt@localhost'}>"
    (repo / "f.txt").write_text("2\n")
    ckpt(repo, "restore", "default/1", env=_env(**env))
    assert (repo / "f.txt").read_text() == "1\n"
    ckpt(repo, "undo", env=_env(**env))
    assert (repo / "f.txt").read_text() == "2\n"


# -- MERGE_MSG and MERGE_HEAD -----------------------------------------------------------------------

def _mid_merge_saved(repo):
    from test_walk13 import _mid_merge

    _mid_merge(repo)
    ckpt(repo, "save", "-m", "mid-merge")
    git(repo, "merge", "--abort")


def test_an_edited_merge_message_survives_a_restore_that_changes_nothing(repo):
    _mid_merge_saved(repo)
    ckpt(repo, "restore", "default/1")
    (repo / ".git/MERGE_MSG").write_text("my careful merge message\n")
    res = ckpt(repo, "restore", "default/1")
    assert "nothing to restore" in res.out
    assert (repo / ".git/MERGE_MSG").read_text() == "my careful merge message\n"
    # an unedited one is the restore's own: restoring a state without a merge removes it with MERGE_HEAD
    (repo / ".git/MERGE_MSG").unlink()
    git(repo, "merge", "--abort")
    ckpt(repo, "restore", "default/1")
    assert (repo / ".git/MERGE_MSG").exists()
    ckpt(repo, "undo")
    assert not (repo / ".git/MERGE_HEAD").exists() and not (repo / ".git/MERGE_MSG").exists()


@pytest.mark.parametrize("what", ["blob", "tree", "missing"])
def test_merge_heads_that_name_no_commit_are_not_written(repo, what):
    """A fetched manifest's merge_heads naming a blob or tree: git calls such a MERGE_HEAD
    corrupt and refuses to commit.  The restore brings the files back and warns instead."""
    _mid_merge_saved(repo)
    oid = {"blob": git(repo, "rev-parse", "HEAD:f"), "tree": git(repo, "rev-parse", "HEAD^{tree}"),
           "missing": b"1" * 40}[what].decode().strip()
    meta = git(repo, "rev-parse", "refs/ckpt/default/1^3").decode().strip()
    manifest = json.loads(git(repo, "cat-file", "blob", f"{meta}:manifest.json"))
    manifest["merge_heads"] = [oid]
    forge_checkpoint(repo, source="refs/ckpt/default/1", dest="refs/ckpt/default/1",
                     blobs={"manifest.json": json.dumps(manifest).encode()})
    res = ckpt(repo, "restore", "default/1", fsck=False)
    assert res.err == ("warning: default/1 was saved during a merge of a commit this repository does not have; "
                       "MERGE_HEAD is not brought back\n")
    assert not (repo / ".git/MERGE_HEAD").exists()


# -- the user's info/exclude ---------------------------------------------------------------------

def test_a_symlinked_info_exclude_is_written_through(repo, tmp_path):
    shared = tmp_path / "shared-exclude"
    shared.write_bytes(b"*.log\n")
    exclude = repo / ".git/info/exclude"
    exclude.unlink()
    exclude.symlink_to(shared)
    ckpt(repo, "agent", "install", "claude-code", "--local")
    assert exclude.is_symlink()
    assert shared.read_bytes().startswith(b"*.log\n# >>> git-ckpt agent settings")
    git(repo, "config", "core.hooksPath", ".githooks")
    ckpt(repo, "hooks", "install")
    assert b"/.githooks/pre-commit\n" in shared.read_bytes()
    ckpt(repo, "hooks", "uninstall")
    ckpt(repo, "agent", "uninstall", "claude-code")
    assert exclude.is_symlink() and shared.read_bytes() == b"*.log\n"


@pytest.mark.parametrize("args", [["agent", "install", "claude-code", "--local"], ["hooks", "install"]])
def test_an_info_exclude_that_cannot_take_a_block_refuses_before_writing(repo, args):
    exclude = repo / ".git/info/exclude"
    exclude.unlink()
    os.mkfifo(exclude)
    git(repo, "config", "core.hooksPath", ".githooks")
    res = ckpt(repo, *args, rc=1)
    assert res.err == (f"error: {exclude} is not a regular file of at most 8388608 bytes, so git ckpt cannot add its "
                       f"lines to it\nhint: make {exclude} a regular file (or remove it), then run the command again\n")
    assert not (repo / ".claude").exists() and not (repo / ".githooks").exists()
    assert not (repo / ".git/ckpt/agent-install.json").exists() and not (repo / ".git/ckpt/hooks.json").exists()
    assert git(repo, "config", "--get", "ckpt.gate", check=False) == b""


BIDI = "pay\u202eredaolnwod\u202c \u2028zero\u200bwidth\u2066iso\u2069\ufeff"


def test_invisible_format_characters_are_shown_escaped_everywhere(repo):
    """Bidi overrides, isolates, zero-width characters and line separators in stored text
    (a teammate's message) reorder or hide what a terminal shows (Trojan Source): escaped in
    every view, as control characters are; the HTML page holds no raw control character."""
    (repo / "f.txt").write_text("1\n")
    ckpt(repo, "save", "-m", BIDI + "\x1b[2J\r")
    want = "pay\\u202eredaolnwod\\u202c \\u2028zero\\u200bwidth\\u2066iso\\u2069\\ufeff\\x1b[2J\\r"
    for args in (["list"], ["show", "default/1"], ["log"], ["log", "--graph"], ["handoff"]):
        out = ckpt(repo, *args).out
        assert not any(c in out for c in "\u202e\u202c\u2028\u200b\u2066\u2069\ufeff\x1b\r"), args
        assert want in out or args[0] in ("log", "handoff") and args[1:] == [], (args, out)
    page = ckpt(repo, "report", "--html", "-").out
    assert not any(c in page for c in "\u202e\u2028\u200b\x1b\r"), "raw control in the page"
    assert want in page


GOING_ON = "; going on without it (git config ckpt.* alone: no overlay of its own)\n"


@pytest.mark.parametrize("broken", [b"[overlay\n", "symlink", "fifo"])
def test_a_broken_ckpt_toml_never_keeps_restore_or_undo_from_going_back(repo, broken):
    """A restore can bring a .ckpt.toml that cannot be read (a crafted checkpoint's symlink to
    /dev/zero, a malformed file): every command that loads it refused, undo included.  A restore
    or undo goes on with git config alone (never the target's overlay patterns), and says so."""
    good = b'[overlay]\ninclude = ["fixtures/"]\n'
    (repo / ".ckpt.toml").write_bytes(good)
    (repo / "f.txt").write_text("1\n")
    ckpt(repo, "save", "-m", "good")
    toml = repo / ".ckpt.toml"
    toml.unlink()
    if broken == "symlink":
        toml.symlink_to("/dev/zero")
    elif broken == "fifo":
        os.mkfifo(toml)
    else:
        toml.write_bytes(broken)
    (repo / "f.txt").write_text("2\n")
    ckpt(repo, "save", "-m", "x", rc=6)
    if broken == "fifo":  # no file a checkpoint can hold: the restore will not replace it, and says so
        res = ckpt(repo, "restore", "default/1", rc=1)
        assert "the pre-restore save would not hold: .ckpt.toml" in res.err and toml.is_fifo()
        toml.unlink()
        toml.write_bytes(b"[overlay\n")
    res = ckpt(repo, "restore", "default/1")
    assert res.err.startswith("warning: ") and res.err.endswith(GOING_ON), res.err
    assert toml.read_bytes() == good and (repo / "f.txt").read_text() == "1\n"
    ckpt(repo, "undo")
    assert (repo / "f.txt").read_text() == "2\n"
    res = ckpt(repo, "undo")
    assert res.err.endswith(GOING_ON), res.err
    assert toml.read_bytes() == good and (repo / "f.txt").read_text() == "1\n"
    git(repo, "config", "ckpt.attempt.onFailure", "bogus")  # git config is no state a checkpoint holds: still refused
    ckpt(repo, "restore", "default/1", rc=6)
