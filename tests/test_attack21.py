"""Attack pass 21: what a crafted checkpoint could do before it was refused.

1. Working out which files the target's rules ignore, restore wrote every ``.gitignore`` blob of
   the target's tree into a scratch worktree at the path the tree gave it, unchecked: a tree
   entry ``..`` or a raw entry name holding ``/`` (an absolute path) put attacker-chosen
   ``.gitignore`` files anywhere the user can write, overwriting the worktree's own, even
   under ``--dry-run`` and before the checkpoint was refused (exit 7).  A rule file whose path
   is no worktree path is now never written, every one is created new (O_EXCL|O_NOFOLLOW), and
   the checkpoint is still refused.

Real repositories, the real ``git ckpt`` entry point and real ``git``.
"""

from __future__ import annotations

import pytest

from conftest import blob, ckpt, git, literal_tree


def _tree_entries(repo, tree: str) -> list[tuple[bytes, bytes, str]]:
    raw = git(repo, "cat-file", "tree", tree)
    out, i = [], 0
    while i < len(raw):
        sp = raw.index(b" ", i)
        nul = raw.index(b"\0", sp)
        out.append((raw[i:sp], raw[sp + 1:nul], raw[nul + 1:nul + 21].hex()))
        i = nul + 21
    return out


def _with_tree(repo, source: str, tree: str, dest: str) -> None:
    """``dest``: checkpoint ``source`` (its parents, message) with its worktree tree replaced."""
    parents = git(repo, "rev-list", "--parents", "-n1", source).decode().split()[1:]
    msg = git(repo, "log", "-1", "--format=%B", source)
    args = [a for p in parents for a in ("-p", p)]
    commit = git(repo, "commit-tree", tree, *args, input=msg).decode().strip()
    git(repo, "update-ref", dest, commit)


@pytest.mark.parametrize("shape", ["dotdot", "dotdot-twice", "absolute-name", "slash-dotdot-name", "dot-git"])
def test_a_crafted_tree_writes_no_rule_file_outside_the_worktree(tmp_path, shape):
    from conftest import init_repo

    repo = init_repo(tmp_path / "w" / "r")
    (repo / ".gitignore").write_text("mine\n")
    git(repo, "add", ".gitignore")
    git(repo, "commit", "-qm", "rules")
    (repo / "b").write_text("b\n")
    ckpt(repo, "save", "-m", "good")
    rules = blob(repo, b"*\n")
    leaf = literal_tree(repo, [(b"100644", b".gitignore", rules)])
    outside = tmp_path / "abs"
    extra = {
        "dotdot": (b"..", leaf),  # r/../.gitignore
        "dotdot-twice": (b"..", literal_tree(repo, [(b"40000", b"..", leaf)])),  # w/../.gitignore
        "absolute-name": (str(outside).encode(), leaf),
        "slash-dotdot-name": (b"x/../../..", leaf),
        "dot-git": (b".GIT", leaf),
    }[shape]
    base = git(repo, "rev-parse", "refs/ckpt/default/1^{tree}").decode().strip()
    tree = literal_tree(repo, sorted([*_tree_entries(repo, base), (b"40000", *extra)], key=lambda e: e[1]))
    _with_tree(repo, "refs/ckpt/default/1", tree, "refs/ckpt/default/2")
    (repo / "zzz").write_text("mine\n")  # an untracked file of the user's: a plan with something to judge
    targets = [tmp_path / "w" / ".gitignore", tmp_path / ".gitignore", outside / ".gitignore"]
    for args in (["--dry-run"], []):
        res = ckpt(repo, "restore", "default/2", *args, rc=7, fsck=False)
        assert "refusing the checkpoint" in res.err, res
        assert [t for t in targets if t.exists()] == [], shape
        assert (repo / ".gitignore").read_text() == "mine\n" and (repo / "zzz").read_text() == "mine\n"
    assert not (repo / ".git" / ".gitignore").exists()
    assert git(repo, "status", "--porcelain").decode() == "?? b\n?? zzz\n"
