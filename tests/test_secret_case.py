"""The secret file-name denylist ignores ASCII case (review, session 10): ``.ENV``,
``Key.PEM``, ``ID_RSA`` were archived into the overlay and pushed without a word, while
``.env`` was left out; on a case-insensitive file system (or under ``core.ignoreCase``) they
are the very same file.  Every caller (overlay capture, the single-path overlay check of
``save --overlay``/``status``, the push scan) shares one matcher.

Real repositories, a bare remote and the real ``git ckpt`` entry point.
"""

from __future__ import annotations

import pytest

from conftest import ckpt, git, with_remote

SPELLINGS = [".ENV", ".Env.Local", "Key.PEM", "ID_RSA", "id_Ed25519.pub", "CREDENTIALS.json", "store.JKS"]


@pytest.mark.parametrize("ignore_case", [False, True])
def test_overlay_leaves_out_a_secret_name_in_any_case(repo, ignore_case):
    git(repo, "config", "core.ignoreCase", "true" if ignore_case else "false")
    (repo / ".gitignore").write_text("state/\n")
    (repo / ".ckpt.toml").write_text('[overlay]\ninclude = ["state/"]\n')
    (repo / "state").mkdir()
    for name in SPELLINGS:
        (repo / "state" / name).write_text("TOKEN=abc\n")
    (repo / "state" / "ok.json").write_text("{}\n")
    (repo / "state" / "environment.txt").write_text("not a secret name\n")
    res = ckpt(repo, "save", "-m", "s")
    shown = ", ".join(f"state/{n}" for n in sorted(SPELLINGS))
    assert f"warning: overlay: left out likely-secret files: {shown}" in res.err
    files = [f["path"] for f in ckpt(repo, "show", "--json").json()["result"]["overlay"]]
    assert files == ["state/environment.txt", "state/ok.json"]


def test_push_scan_flags_a_secret_name_in_any_case(tmp_path):
    bare, repo = with_remote(tmp_path, "r")
    (repo / "Deploy.PEM").write_text("not really a key\n")  # untracked, not ignored: in the snapshot
    ckpt(repo, "save", "-m", "s")
    res = ckpt(repo, "push", rc=10)
    assert "secret?  Deploy.PEM: file name on the secrets denylist [worktree of default/1]" in res.err
    assert git(bare, "for-each-ref", "refs/ckpt", "refs/notes").decode() == ""
