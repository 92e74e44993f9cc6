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

import os

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
    """``dest``: checkpoint ``source`` with its worktree tree replaced, its manifest naming it."""
    from test_hostile_input import forge

    forge(repo, source=source, dest=dest, tree=tree)


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


@pytest.mark.parametrize("where", ["value", "subsection"])
@pytest.mark.parametrize("how", ["file", "git -c"])
def test_a_config_entry_that_is_not_utf8_is_one_error_line_not_a_crash(repo, where, how):
    """6. A Latin-1 byte in any ``ckpt.*`` entry (a ~/.gitconfig written in another encoding)
    crashed every command read through libgit2 (exit 70, the gate hook too) and reached a
    verifier's definition as a surrogate through ``git -c``.  It is decoded once, where git
    config is read: one error line, exit 6, both ways."""
    import os
    import subprocess

    ckpt(repo, "hooks", "install")
    (repo / "a").write_text("a\n")
    git(repo, "add", "a")
    ckpt(repo, "save", "-m", "s")
    name, value = (b'verifier "t"', b"caf\xe9") if where == "value" else (b'verifier "t\xe9"', b"true")
    shown = "ckpt.verifier.t.command" if where == "value" else "ckpt.verifier.t\\xe9.command"
    env = dict(os.environ)
    if how == "file":
        with open(repo / ".git" / "config", "ab") as fh:
            fh.write(b"[ckpt " + name.replace(b"verifier ", b"") .replace(b'"', b"") .join([b'"verifier.', b'"']) + b"]\n\tcommand = " + value + b"\n")
    else:
        key = b"ckpt." + name.split(b'"')[0].strip() + b"." + name.split(b'"')[1] + b".command"
        env.update({"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": os.fsdecode(key), "GIT_CONFIG_VALUE_0": os.fsdecode(value)})
    want = f"error: git config {shown} is not UTF-8 text\nhint: git config --edit (or fix the file that sets {shown})\n"
    res = ckpt(repo, "verify", rc=6, env=env)
    assert res.err == want, res
    assert ckpt(repo, "save", "-m", "t", rc=6, env=env).err == want
    proc = subprocess.run(["git", "commit", "-qm", "c"], cwd=repo, capture_output=True, env=env)
    assert proc.returncode == 1 and b"Traceback" not in proc.stderr and b"not UTF-8 text" in proc.stderr, proc
    assert git(repo, "rev-list", "--count", "HEAD").decode() == "1\n"


def test_a_latin1_entry_outside_ckpt_changes_nothing(repo):
    """The sibling: libgit2 decodes every name it lists, so a Latin-1 ``[alias "é"]`` anywhere
    stopped git-ckpt too; git reads it, and so do we."""
    with open(repo / ".git" / "config", "ab") as fh:
        fh.write(b'[alias "caf\xe9"]\n\tx = status\n')
    (repo / "a").write_text("a\n")
    assert ckpt(repo, "save", "-m", "s").out == "checkpoint saved: default/1\n"
    assert ckpt(repo, "status").out.splitlines()[3] == "worktree:  matches default/1 (@)"


@pytest.mark.parametrize("rules", [".gitignore", "info/exclude"])
@pytest.mark.parametrize("kind", ["file", "symlink"])
def test_undo_brings_back_an_ignored_overlay_file_where_a_tracked_directory_was(repo, rules, kind):
    """3. A restore may replace an ignored file the pre-restore overlay holds (``out``) by the
    target's tracked ``out/x``; the undo then refused: ``out/x``, ignored by the rules of the state
    it returns to, was "kept", so the directory blocked writing ``out`` back.  A tracked file
    below a path the target writes goes (the pre-restore save holds it); undo is exact."""
    import os

    from conftest import worktree_state

    (repo / ".ckpt.toml").write_text('[overlay]\ninclude = ["*"]\n')
    git(repo, "add", ".ckpt.toml")
    git(repo, "commit", "-qm", "overlay")
    (repo / "out").mkdir()
    (repo / "out" / "x").write_text("tracked\n")
    git(repo, "add", "out")
    ckpt(repo, "save", "-m", "target")
    git(repo, "rm", "-rq", "--cached", "out")
    (repo / "out" / "x").unlink()
    (repo / "out").rmdir()
    if rules == ".gitignore":
        (repo / ".gitignore").write_text("out\n")
        git(repo, "add", ".gitignore")
    else:
        (repo / ".git" / "info").mkdir(exist_ok=True)
        (repo / ".git" / "info" / "exclude").write_text("out\n")
    if kind == "file":
        (repo / "out").write_text("ignored log\n")
    else:
        (repo / "sub").mkdir()
        (repo / "sub" / "x").write_text("s\n")
        os.symlink("sub", repo / "out")
    ckpt(repo, "save", "-m", "current")
    before = worktree_state(repo)
    index = git(repo, "ls-files", "-s")
    ckpt(repo, "restore", "default/1")
    assert (repo / "out" / "x").read_text() == "tracked\n" and not (repo / "out").is_symlink()
    assert ckpt(repo, "undo").out.endswith("undo: restored default/2\n")
    assert worktree_state(repo) == before and git(repo, "ls-files", "-s") == index
    ckpt(repo, "restore", "default/1")  # and over again
    assert (repo / "out" / "x").read_text() == "tracked\n"


@pytest.mark.parametrize("line", [
    b"\xef\xbb\xbf" + b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"ckpt_save","arguments":{"message":"bom"}}}',
    b"\xef\xbb\xbf" + b'{"jsonrpc":"2.0","id":2,"method":"tools/list"}',
])
def test_an_mcp_line_with_a_byte_order_mark_is_answered(repo, line):
    """8. The screen read a line with a UTF-8 BOM as JSON (as every JSON from outside is read)
    and passed it on; the SDK dropped it and the client waited forever.  The line the SDK gets
    is the one the screen read."""
    from test_attack19 import _Server

    server = _Server(repo)
    try:
        server.send(line)
        res = server.answer()
        assert res["id"] == 2 and "error" not in res and not res["result"].get("isError"), res
        server.still_serves(3)
    finally:
        rc, rest = server.close()
    assert rc == 0 and b"Traceback" not in rest, rest


@pytest.mark.parametrize("change", ["setuid", "content"])
def test_an_overlay_entry_other_than_its_manifest_lists_is_refused(repo, change):
    """Restore now writes every permission bit an archive holds (setuid included): what it
    writes must be what the manifest lists (and plan, list and show say), so an archive entry
    whose bits or content differ from its manifest's is refused before anything changes."""
    import io
    import tarfile

    from test_hostile_input import forge

    (repo / ".gitignore").write_text("fx/\n")
    git(repo, "add", ".gitignore")
    git(repo, "commit", "-qm", "ignore")
    git(repo, "config", "ckpt.overlay.include", "fx/")
    (repo / "fx").mkdir()
    (repo / "fx" / "tool").write_bytes(b"#!/bin/sh\n")
    (repo / "fx" / "tool").chmod(0o755)
    ckpt(repo, "save", "-m", "one")
    data = b"#!/bin/sh\n" if change == "setuid" else b"#!/bin/sh\nevil\n"
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        info = tarfile.TarInfo("fx/tool")
        info.mode, info.size = (0o4755 if change == "setuid" else 0o755), len(data)
        tar.addfile(info, io.BytesIO(data))

    def same_size(m):  # the manifest's size follows the archive; its digest and bits do not
        m["overlay"]["files"][0]["size"] = len(data)

    forge(repo, tar=buf.getvalue(), edit=same_size)
    (repo / "fx" / "tool").unlink()
    res = ckpt(repo, "restore", "origin:default/1", rc=7, fsck=False)
    assert res.err.startswith("error: overlay of origin:default/1 holds 'fx/tool' with other content or permission bits "
                              "than its manifest lists; refusing the checkpoint\n"), res.err
    assert not (repo / "fx" / "tool").exists() and ckpt(repo, "list").out.count("\n") == 1


def test_a_non_blocking_output_pipe_gets_all_the_output_and_the_command_s_exit_code(repo):
    """9. A reader that made the pipe non-blocking (as some agent harnesses do) got exit 120 and
    output cut where the pipe filled: the writer under stdout raised BlockingIOError.  It waits
    for the reader as a blocking pipe would.  The pipe is made one page small and read only once
    it is full (the writer has met EAGAIN by then): a condition, not a timing."""
    import fcntl
    import os
    import select
    import subprocess
    import termios

    whole = subprocess.run(["git", "ckpt", "help", "--json"], cwd=repo, capture_output=True, check=True).stdout
    r, w = os.pipe()
    fcntl.fcntl(w, 1031, 4096)  # F_SETPIPE_SZ
    size = fcntl.fcntl(w, 1032)  # F_GETPIPE_SZ
    assert len(whole) > 4 * size
    fcntl.fcntl(w, fcntl.F_SETFL, fcntl.fcntl(w, fcntl.F_GETFL) | os.O_NONBLOCK)
    proc = subprocess.Popen(["git", "ckpt", "help", "--json"], cwd=repo, stdout=w, stderr=subprocess.PIPE)
    os.close(w)
    import array

    pending = array.array("i", [0])
    while pending[0] < size:  # full: every later write of the child meets EAGAIN until this reads
        select.select([r], [], [], 1.0)
        fcntl.ioctl(r, termios.FIONREAD, pending)
        if proc.poll() is not None:
            break
    data = b""
    while chunk := os.read(r, 1 << 16):
        data += chunk
    os.close(r)
    err = proc.stderr.read()
    assert (proc.wait(), data, err) == (0, whole, b"")


@pytest.mark.parametrize("patterns", [["??"], ["?"], ["[é]"], ["é"], ["*é*"], ["a?"], ["?/"], ["**/é"], ["token-??"],
                                      ["é/"], ["[é]?/é"], "secrets"])
def test_overlay_and_secret_patterns_match_bytes_as_git_check_ignore_does(tmp_path, patterns):
    """7. Patterns were matched by RE2 per code point and git matches per byte: ``token-??`` left
    ``token-é`` out of an exclude (archived and pushed), ``[é]`` took names git does not.  Both
    sides are now matched as their bytes.  The oracle is git itself, over every path of one or
    two components from names that are ASCII, two-byte UTF-8, not UTF-8, or hold a newline."""
    import os

    from git_ckpt.config import SECRET_PATTERNS, compile_patterns

    pats = SECRET_PATTERNS if patterns == "secrets" else patterns
    names = [b"a", b"token-\xc3\xa9", b".env", b"x.pem", b"\xc3\xa9", b"\xff", b"a\nb", b"\xe2\x80\xa8", b"ab", b"\xc3\xa9\xc3\xa9",
             b"token-ab", b"id_rsa", b"\xc3", b"a\xc3\xa9"]
    paths = sorted({n for n in names} | {a + b"/" + b for a in names for b in names})
    repo = tmp_path / "r"
    git(tmp_path, "init", "-q", str(repo))
    (repo / ".git" / "info" / "exclude").write_bytes("\n".join(pats).encode() + b"\n")
    out = git(repo, "check-ignore", "--no-index", "-z", "--stdin", "-v", "-n", input=b"".join(p + b"\0" for p in paths)).split(b"\0")
    by_git = {out[i + 3]: bool(out[i + 2]) and not out[i + 2].startswith(b"!") for i in range(0, len(out) - 1, 4)}
    ours = compile_patterns(pats, normalize=patterns != "secrets")
    differ = [p for p in paths if ours.match_file(os.fsdecode(p)) != by_git[p]]
    assert differ == [], differ[:10]


# -- attack pass 22: gc's protection of unpushed commits, overlay entries vs the manifest ---------

def _gated_commit(root, task: str) -> str:
    """In ``root`` (hooks installed): save, verify (promotes), commit it through the gate; the commit."""
    ckpt(root, "task", "start", task)
    (root / "f").write_text(f"{task}\n")
    ckpt(root, "save", "-m", "one")
    ckpt(root, "verify")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "gated")
    return git(root, "rev-parse", "HEAD").decode().strip()


def test_gc_keeps_its_own_checkpoint_of_an_unpushed_commit_though_a_fetched_copy_sorts_first(tmp_path):
    """Your own pushed checkpoints come back by fetch as ``origin:zz/1``, which sorted before the
    local ``zz/1``: gc kept only the name the verdict picked (the fetched ref, which a teammate
    can move) and pruned the local one.  Every local checkpoint whose own results verify the
    tree is kept."""
    git(tmp_path, "init", "-q", "--bare", str(tmp_path / "remote.git"))
    from conftest import init_repo

    me = init_repo(tmp_path / "me")
    git(me, "remote", "add", "origin", str(tmp_path / "remote.git"))
    git(me, "push", "-q", "origin", "main")
    git(me, "fetch", "-q", "origin")
    ckpt(me, "hooks", "install")
    head = _gated_commit(me, "zz")
    for i in (2, 3):
        (me / "f").write_text(f"{i}\n")
        ckpt(me, "save", "-m", f"s{i}")
    ckpt(me, "verify")  # zz/3 promoted: zz/1 is kept only as the evidence of the unpushed commit
    ckpt(me, "push")
    ckpt(me, "fetch")
    assert "origin:zz/1" in ckpt(me, "verify-commit", "HEAD").out
    res = ckpt(me, "gc", "--keep", "1", "--older-than", "0s", "--json").json()["result"]
    assert [p["id"] for p in res["pruned"]] == ["zz/2"]
    assert {p["id"]: p["reason"] for p in res["protected"]}["zz/1"] == f"backs unpushed commit {head[:12]} (verify-commit finds it by its tree)"
    git(tmp_path / "remote.git", "update-ref", "refs/ckpt/zz/1", git(me, "rev-parse", "refs/ckpt/zz/3").decode().strip())
    ckpt(me, "fetch")
    assert ckpt(me, "verify-commit", "HEAD").out == f"HEAD ({head[:12]}): verified: tree of checkpoint zz/1\n"


def test_gc_keeps_what_a_detached_head_of_another_worktree_needs(tmp_path):
    from conftest import init_repo

    repo = init_repo(tmp_path / "r")
    ckpt(repo, "hooks", "install")
    git(repo, "worktree", "add", "-q", "--detach", str(tmp_path / "wt"))
    wt = tmp_path / "wt"
    head = _gated_commit(wt, "w")
    (wt / "f").write_text("later\n")
    ckpt(wt, "save", "-m", "later")
    ckpt(wt, "verify")  # w/2 promoted
    res = ckpt(repo, "gc", "--all", "--keep", "1", "--older-than", "0s", "--json").json()["result"]
    assert res["pruned"] == [] and {p["id"]: p["reason"] for p in res["protected"]}["w/1"].startswith(f"backs unpushed commit {head[:12]}")
    assert ckpt(wt, "verify-commit", "HEAD").out.endswith("verified: tree of checkpoint w/1\n")


@pytest.mark.parametrize("shape", ["file-then-dir", "dir-then-file", "symlink-then-dir", "symlink-target"])
def test_an_overlay_archive_whose_entries_say_otherwise_than_the_manifest_is_refused(repo, shape):
    """A file (or symlink) and a directory at one path — the directory won and the file was never
    written, exit 0 — and a symlink whose target is not the manifest's: refused before any change."""
    import io
    import tarfile

    from test_hostile_input import forge

    (repo / ".gitignore").write_text("cache/\n")
    git(repo, "add", ".gitignore")
    git(repo, "commit", "-qm", "ignore")
    git(repo, "config", "ckpt.overlay.include", "cache/")
    (repo / "cache").mkdir()
    (repo / "cache" / "a").write_text("a\n")
    os.symlink("x", repo / "cache" / "l")
    ckpt(repo, "save", "-m", "one")
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        def add(name, kind, data=b"", link=""):
            info = tarfile.TarInfo(name)
            info.type, info.mode = kind, 0o644 if kind == tarfile.REGTYPE else 0o755
            if kind == tarfile.SYMTYPE:
                info.linkname = link
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data) if data else None)
        entries = {
            "file-then-dir": [("cache/a", tarfile.REGTYPE, b"a\n"), ("cache/a", tarfile.DIRTYPE), ("cache/l", tarfile.SYMTYPE, b"", "x")],
            "dir-then-file": [("cache/a", tarfile.DIRTYPE), ("cache/a", tarfile.REGTYPE, b"a\n"), ("cache/l", tarfile.SYMTYPE, b"", "x")],
            "symlink-then-dir": [("cache/a", tarfile.REGTYPE, b"a\n"), ("cache/l", tarfile.SYMTYPE, b"", "x"), ("cache/l", tarfile.DIRTYPE)],
            "symlink-target": [("cache/a", tarfile.REGTYPE, b"a\n"), ("cache/l", tarfile.SYMTYPE, b"", "y")],
        }[shape]
        for e in entries:
            add(*e)
    forge(repo, tar=buf.getvalue())
    (repo / "cache" / "a").write_text("mine\n")
    res = ckpt(repo, "restore", "origin:default/1", rc=7, fsck=False)
    assert "refusing the " in res.err.splitlines()[0], res.err
    assert (repo / "cache" / "a").read_text() == "mine\n" and os.readlink(repo / "cache" / "l") == "x"
