"""A second new-user walk-through of the README (issue 15, "done when"): a bare remote, two
people, an agent — every command of the README's sharing story prints what the README shows."""

from __future__ import annotations

import re
from pathlib import Path

from conftest import ckpt, git, init_repo

README = (Path(__file__).resolve().parent.parent / "README.md").read_text()


def shown(command: str) -> list[str]:
    """The output lines the README prints under ``$ COMMAND`` (comments after the command
    ignored), up to the next prompt or the end of the block."""
    lines = README.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("$ ") and line[2:].split("  #", 1)[0].strip() == command:
            out = []
            for nxt in lines[i + 1:]:
                if nxt.startswith("$ ") or nxt.startswith("```"):
                    return out
                out.append(nxt)
    raise AssertionError(f"the README shows no `$ {command}`")


def same(actual: str, command: str) -> None:
    def norm(text: str) -> str:
        text = re.sub(r"\b\d+[smhd]\b", "AGE", text)
        text = re.sub(r"\b[0-9a-f]{7,40}\b", "HEX", text)
        text = re.sub(r"(?<![\w:])/[^\s)]+", "PATH", text)  # absolute paths (another machine's, in a note)
        return re.sub(r" +", " ", text)

    assert [norm(x) for x in actual.splitlines()] == [norm(x) for x in shown(command)], (command, actual)


def test_two_people_one_remote_as_the_readme_says(tmp_path):
    remote = tmp_path / "shared.git"
    # as the README has it, where git's default branch is still master (git 2.39 without
    # init.defaultBranch): without -b main a clone of it checked out nothing
    git(tmp_path, "-c", "init.defaultBranch=master", "init", "-q", "--bare", "-b", "main", str(remote))
    alice = init_repo(tmp_path / "my-project")
    git(alice, "remote", "add", "origin", str(remote))
    git(alice, "push", "-q", "origin", "main")
    res = ckpt(alice, "task", "start", "fix-auth-null", "--goal", "login must not crash on a null token")
    assert res.err == ""
    (alice / "auth.py").write_text("def login(token):\n    if token is None:\n        return None\n")
    same(ckpt(alice, "save", "-m", "guard added, tests half done").out, 'git ckpt save -m "guard added, tests half done"')
    same(ckpt(alice, "push").out, "git ckpt push")
    bob = tmp_path / "bob"
    git(tmp_path, "clone", "-q", str(remote), str(bob))
    assert (bob / "README").exists()  # the clone checked main out
    same(ckpt(bob, "fetch").out, "git ckpt fetch")
    same(ckpt(bob, "list", "--remote", "origin").out, "git ckpt list --remote origin")
    same(ckpt(bob, "list", "--remote", "origin", "--all").out, "git ckpt list --remote origin")
    assert "auth.py" in ckpt(bob, "show", "origin:fix-auth-null/1").out
    (bob / "mine.txt").write_text("bob's own work\n")
    same(ckpt(bob, "restore", "origin:fix-auth-null/1", "--worktree", "../review-auth").out,
         "git ckpt restore origin:fix-auth-null/1 --worktree ../review-auth")
    assert (tmp_path / "review-auth" / "auth.py").exists()
    # README: no branch note in that worktree, for that restore or any later one there
    review = tmp_path / "review-auth"
    for args in (["undo"], ["undo"], ["restore", "origin:fix-auth-null/1"], ["undo"]):
        assert "was saved on branch" not in ckpt(review, *args).out, args
    git(review, "switch", "-q", "-c", "review")  # on a branch of its own, the note is news again
    assert "note: origin:fix-auth-null/1 was saved on branch main (this worktree is on review)\n" in \
        ckpt(review, "restore", "origin:fix-auth-null/1").out
    started = ckpt(bob, "task", "start", "fix-auth-null-bob")
    assert started.err == "" and started.out == "task fix-auth-null-bob is now current\n"
    (bob / "mine.txt").write_text("bob's newer work\n")
    same(ckpt(bob, "restore", "origin:fix-auth-null/1").out, "git ckpt restore origin:fix-auth-null/1")
    assert (bob / "auth.py").exists()
    # the one name clash the README warns about is said at once, not at push time
    clash = ckpt(bob, "task", "start", "fix-auth-null")
    assert clash.err.startswith("warning: origin:fix-auth-null already exists (fetched)")
    # and the agent: hooks installed, committed, and working for a teammate's clone
    ckpt(alice, "agent", "install", "claude-code")
    git(alice, "add", ".claude/settings.json")
    git(alice, "commit", "-q", "-m", "agent hooks")
    assert str(tmp_path).encode() not in (alice / ".claude/settings.json").read_bytes()
    assert ckpt(alice, "agent", "uninstall", "claude-code").out == "removed .claude/settings.json (install created it)\n"


def sh_block_after(marker: str) -> list[str]:
    """The command lines of the first ```sh block after ``marker`` in the README."""
    rest = README[README.index(marker):]
    block = rest[rest.index("```sh\n") + 6:]
    return [line for line in block[:block.index("```")].splitlines() if line.strip()]


def test_the_gate_example_commits_as_written_with_an_untracked_file(tmp_path):
    """The README's commit-gate story, replayed as written: refused, the hint's save && verify,
    then its commit line — which works with an untracked file in the worktree (the checkpoint
    holds it; `commit -am` would leave it out and be refused, as the README says)."""
    import subprocess

    from test_verify import verifier, write_config

    repo = init_repo(tmp_path / "app")
    (repo / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    write_config(repo, verifier("tests", ["true"]))
    git(repo, "add", "calc.py")
    git(repo, "commit", "-q", "-m", "calc")
    ckpt(repo, "task", "start", "fix-add")
    ckpt(repo, "hooks", "install")
    (repo / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    ckpt(repo, "save")
    ckpt(repo, "verify")
    (repo / "calc.py").write_text("def add(a, b):\n    return b + a\n")  # changed since: refused
    first = subprocess.run(["git", "commit", "-am", "fix add"], cwd=repo, capture_output=True, text=True)
    assert first.returncode != 0 and first.stderr.splitlines()[-1] == shown('git commit -am "fix add"')[-1]
    (repo / "notes.txt").write_text("an untracked file\n")  # e.g. a tool's, written meanwhile
    lines = sh_block_after("Do what the hint says")
    assert lines == ["git ckpt save && git ckpt verify", 'git add -A && git commit -m "fix add"']
    assert subprocess.run(["sh", "-c", lines[0]], cwd=repo, capture_output=True).returncode == 0
    # what the README warns about: commit -am leaves the untracked file out, and is refused
    am = subprocess.run(["git", "commit", "-am", "fix add"], cwd=repo, capture_output=True, text=True)
    assert am.returncode != 0 and "  D notes.txt" in am.stderr
    done = subprocess.run(["sh", "-c", lines[1]], cwd=repo, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert git(repo, "show", "HEAD:notes.txt") == b"an untracked file\n"
    assert git(repo, "show", "HEAD:calc.py") == b"def add(a, b):\n    return b + a\n"
    assert "Ckpt-Verified: fix-add/2" in git(repo, "log", "-1", "--format=%B").decode()


def test_the_no_changes_line_is_the_one_the_readme_quotes(repo):
    """README quotes save's whole no-changes line; save prints exactly that (lowercase, git style)."""
    quoted = re.search(r"`(no changes since fix-auth/1; nothing saved[^`]*)`", README).group(1)
    ckpt(repo, "task", "start", "fix-auth")
    (repo / "a.txt").write_text("a\n")
    ckpt(repo, "save")
    assert ckpt(repo, "save").out == quoted + "\n"
