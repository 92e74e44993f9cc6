"""Attack pass 23: names and manifests a remote sends, read back by verify-commit and fetch.

1. A teammate's ref ``refs/ckpt/$(touch${IFS}F)/1``, fetched, was named by ``verify-commit`` as
   checkpoint ``origin:$(touch${IFS}F)/1`` and put into its hint (and ``--json`` ``fix``), a
   shell command for whoever pastes it.  Every name read from a ref now passes one parser
   (store.parse_ckpt_ref: remote and task names checked, last part a number, ``promoted`` or
   ``log``); what fails it is no checkpoint: never judged, hinted, completed or listed as one.
   ``fetch`` prints a ref it brought escaped (a non-UTF-8 byte as ``\\udcff``).
2. Thousands of refs naming one huge manifest made ``verify-commit`` and ``list --remote``
   decode it once per ref (54 s for 10 refs).  A decoded manifest is kept by blob id.
3. ``git ckpt fetch 'file://[x'`` (or a remote configured with such a URL) crashed with exit 70.
4. A forged fetched ``promoted`` ref whose manifest says ``T/1`` while ``REMOTE:T/1`` is another
   commit made the verdict name ``REMOTE:T/1`` (which does not have the tree) and its hint
   verify that other checkpoint.  A promoted ref is called ``T/N`` only when that ref holds the
   same commit.

Real repositories, a bare remote and the real ``git ckpt`` entry point.
"""

from __future__ import annotations

import pytest

from conftest import ckpt, commit_config, git, with_remote

VERIFIER = '[[verifier]]\nname = "tests"\ncommand = ["true"]\nrequired = true\n'


def _shared(tmp_path):
    """A bare remote and alice (a required verifier, main pushed), with task ``t`` saved on
    an unverified commit of its content; returns (remote, alice)."""
    remote, alice = with_remote(tmp_path)
    commit_config(alice, VERIFIER)
    ckpt(alice, "task", "start", "t")
    (alice / "a.txt").write_text("evil\n")
    ckpt(alice, "save", "-m", "x")
    git(alice, "add", "-A")
    git(alice, "commit", "-qm", "unverified")
    return remote, alice


def _bob(tmp_path, remote):
    bob = tmp_path / "bob"
    git(tmp_path, "clone", "-q", str(remote), str(bob))
    ckpt(bob, "trust")
    return bob


HOSTILE = ["$(touch${IFS}PWNED)", "a;touch${IFS}PWNED", "`id`", "a'b", 'a"b', "a|b", "a&b", "-rf", "a{b}", "a@b"]


@pytest.mark.parametrize("name", HOSTILE)
def test_a_fetched_ref_with_a_hostile_task_name_is_no_checkpoint(tmp_path, name):
    remote, alice = _shared(tmp_path)
    git(alice, "update-ref", f"refs/ckpt/{name}/1", "refs/ckpt/t/1")
    git(alice, "update-ref", "-d", "refs/ckpt/t/1")
    git(alice, "update-ref", "-d", "refs/ckpt/t/log")
    git(alice, "push", "-q", "origin", "main", "refs/ckpt/*:refs/ckpt/*")
    bob = _bob(tmp_path, remote)
    res = ckpt(bob, "fetch")
    # no task can have that name: not fetched, and said
    assert res.out == ("not fetched: 1 ref on origin naming no checkpoint, ledger or promotion (refs/ckpt/T/N, T/log, "
                       f"T/promoted): refs/ckpt/{name}/1\nnothing new on origin\n")
    assert git(bob, "for-each-ref", "refs/ckpt-remotes") == b""
    # as an older git ckpt fetched it (or another tool): there too it is no checkpoint
    git(bob, "fetch", "-q", "origin", f"refs/ckpt/{name}/1:refs/ckpt-remotes/origin/{name}/1")
    assert ckpt(bob, "fetch").out.endswith("nothing new on origin\n")  # and fetch leaves it be: it blocks nothing
    assert git(bob, "for-each-ref", "--format=%(refname)", "refs/ckpt-remotes").decode() == f"refs/ckpt-remotes/origin/{name}/1\n"
    head = git(bob, "rev-parse", "origin/main").decode().strip()
    res = ckpt(bob, "verify-commit", "origin/main", rc=1)
    assert res.out == f"origin/main ({head[:12]}): not verified: no checkpoint has this tree\n"
    js = ckpt(bob, "verify-commit", "origin/main", "--json", rc=1).json()["result"][0]
    assert (js["checkpoint"], js["fix"]) == (None, "")
    assert name not in ckpt(bob, "list", "--remote", "origin", "--all").out
    assert not (bob / "PWNED").exists() and not (tmp_path / "PWNED").exists()


def test_fetch_escapes_a_ref_name_that_is_not_utf8(tmp_path):
    remote, alice = _shared(tmp_path)
    # git accepts any byte >= 0x80 in a ref name; written loose, as another tool could
    refdir = alice / ".git" / "refs" / "ckpt"
    oid = git(alice, "rev-parse", "refs/ckpt/t/1").strip()
    if not refdir.is_dir():
        pytest.skip("a reftable repository has no loose refs to write by hand")
    (refdir / "t").mkdir(exist_ok=True)
    (refdir / "t").joinpath(b"9\xff".decode("utf-8", "surrogateescape")).write_bytes(oid + b"\n")
    git(alice, "push", "-q", "origin", "main", "refs/ckpt/*:refs/ckpt/*")
    bob = _bob(tmp_path, remote)
    res = ckpt(bob, "fetch")
    # no checkpoint name, so not fetched; said escaped
    assert res.out.endswith("; checkpoints: origin:t/1\nnot fetched: 1 ref on origin naming no checkpoint, ledger or "
                            "promotion (refs/ckpt/T/N, T/log, T/promoted): refs/ckpt/t/9\\udcff\n")
    assert b"9\xff" not in git(bob, "for-each-ref", "refs/ckpt-remotes")
    assert ckpt(bob, "fetch", "--json").json()["result"]["ignored"] == ["refs/ckpt/t/9\\xff"]


def test_refs_sharing_one_manifest_decode_it_once(tmp_path):
    """Through the library (the cost is decoding, which the CLI cannot show but bench/ can):
    two checkpoint commits naming one meta commit share one decoded manifest."""
    from git_ckpt import store
    from git_ckpt.gitcore import Repo

    _remote, alice = _shared(tmp_path)
    parents = git(alice, "rev-list", "--parents", "-n1", "refs/ckpt/t/1").decode().split()[1:]
    tree = git(alice, "rev-parse", "refs/ckpt/t/1^{tree}").decode().strip()
    twin = git(alice, "commit-tree", tree, *[a for p in parents for a in ("-p", p)], "-m", "twin").decode().strip()
    git(alice, "update-ref", "refs/ckpt/t/7", twin)
    repo = Repo.discover(str(alice))
    store._MANIFESTS.clear()
    one = store.load(repo, git(alice, "rev-parse", "refs/ckpt/t/1").decode().strip(), ref="refs/ckpt/t/1")
    two = store.load(repo, twin, ref="refs/ckpt/t/7", id="t/7")
    assert one.manifest is two.manifest and (one.id, two.id) == ("t/1", "t/7")
    assert len(store._MANIFESTS) == 1


@pytest.mark.parametrize("url", ["file://[x", "file://[::1", "file://a]b/"])
@pytest.mark.parametrize("command", [["fetch"], ["push"], ["list", "--remote"]])
def test_a_url_python_cannot_split_is_a_usage_error(repo, url, command):
    res = ckpt(repo, *command, url, rc=2)
    assert res.err == (f"error: {url!r} is not a configured remote\nhint: git ckpt pushes and fetches through a named "
                       "remote: git remote add NAME URL adds one (git remote -v lists them)\n")


def test_a_configured_remote_with_such_a_url_does_not_break_another_lookup(repo, tmp_path):
    git(repo, "remote", "add", "weird", "file://[oops/repo.git")
    git(tmp_path, "init", "-q", "--bare", "b.git")
    git(repo, "remote", "add", "origin", "../b.git")  # relative: read from the worktree's top, as git does
    (repo / "sub").mkdir()
    res = ckpt(repo / "sub", "fetch", str(tmp_path / "b.git"), rc=2)
    assert res.err.splitlines()[1] == "hint: that is the URL of remote origin; name the remote instead"
    res = ckpt(repo / "sub", "fetch", "../../b.git", rc=2)  # typed: read from where it is typed
    assert res.err.splitlines()[1] == "hint: that is the URL of remote origin; name the remote instead"


def test_a_forged_promoted_ref_is_named_by_its_own_ref(tmp_path):
    remote, alice = _shared(tmp_path)
    (alice / "a.txt").write_text("A\n")
    ckpt(alice, "save", "-m", "A")  # t/2, content A (a.txt is committed "evil")
    # promoted: content evil (HEAD's tree) under t/2's index and t/1's meta (its manifest says t/1)
    index = git(alice, "rev-list", "--parents", "-n1", "refs/ckpt/t/2").decode().split()[2]
    meta1 = git(alice, "rev-parse", "refs/ckpt/t/1^3").decode().strip()
    head = git(alice, "rev-parse", "HEAD").decode().strip()
    forged = git(alice, "commit-tree", git(alice, "rev-parse", "HEAD^{tree}").decode().strip(),
                 "-p", head + "~1", "-p", index, "-p", meta1, "-m", "forged").decode().strip()
    git(alice, "update-ref", "refs/ckpt/t/promoted", forged)
    git(alice, "update-ref", "-d", "refs/ckpt/t/1")  # so only the promoted ref has HEAD's tree
    git(alice, "push", "-q", "origin", "main", "refs/ckpt/*:refs/ckpt/*")
    bob = _bob(tmp_path, remote)
    ckpt(bob, "fetch")
    sha = git(bob, "rev-parse", "origin/main").decode().strip()
    res = ckpt(bob, "verify-commit", "origin/main", rc=1)
    assert res.out == (f"origin/main ({sha[:12]}): not verified: checkpoint origin:t/promoted has this tree, but required "
                       "verifier tests has no result\nhint: git ckpt verify origin:t/promoted --isolated records the missing result here\n")
    # the hint verifies the commit that has the tree, and then the commit is verified by it
    ckpt(bob, "verify", "origin:t/promoted", "--isolated")
    assert ckpt(bob, "verify-commit", "origin/main").out == (
        f"origin/main ({sha[:12]}): verified: tree of checkpoint origin:t/promoted (promoted on origin)\n")


def _toml(patterns: list[str]) -> str:
    return "[overlay]\ninclude = [" + ", ".join(f'"{p}"' for p in patterns) + "]\n"


@pytest.mark.parametrize("case", ["budget", "text"])
def test_patterns_beyond_one_matcher_are_a_clear_config_error(repo, case):
    """Benchmark pair 11 found it: some 850 patterns of three wildcards and a ``**`` each (every
    one within its own limits) exceed RE2's 8 MiB set budget, and save said "bad pattern in
    include/exclude: failed to compile Set"; 1000 patterns of 1 KiB took RE2 8 s to give up.
    Patterns are capped at 64 KiB in all, and a set RE2 cannot hold is said to be that."""
    if case == "budget":
        pats = [f"gen{i:04d}/*-build-*/**/cache-{i}-*.tmp" for i in range(990)]
        want = ("error: the 990 overlay patterns are too many or too complex to match together (RE2's memory "
                "budget, 8 MiB, is exceeded)\nhint: use fewer patterns, or fewer wildcards in them (overlay.include and "
                "overlay.exclude in .ckpt.toml, or git config ckpt.overlay.include)\n")
    else:
        pats = [f"d{i:03d}/" + "x" * 1000 for i in range(70)]
        want = "error: .ckpt.toml: overlay patterns of more than 64 KiB in all\nhint: fix that key in .ckpt.toml\n"
    (repo / ".ckpt.toml").write_text(_toml(pats))
    (repo / "f").write_text("f\n")
    refs = git(repo, "for-each-ref").decode()
    res = ckpt(repo, "save", "-m", "s", rc=6)
    assert res.err == want and git(repo, "for-each-ref").decode() == refs


@pytest.mark.parametrize("policy", ["one pattern", "beyond one matcher"])
def test_a_manifest_policy_beyond_one_matcher_covers_nothing(repo, policy):
    """A checkpoint's recorded policy decides which overlay files a restore may delete: one no
    matcher can hold (a teammate's tool could write it) covers nothing, so the ignored file
    stays, and the restore goes on; the same policy as one pattern does delete it."""
    import json

    from conftest import forge_checkpoint

    (repo / ".gitignore").write_text("*.log\n")
    (repo / ".ckpt.toml").write_text(_toml(["*.log"]))
    git(repo, "add", ".gitignore", ".ckpt.toml")
    git(repo, "commit", "-qm", "ignore")
    ckpt(repo, "save", "-m", "plain")
    manifest = json.loads(git(repo, "show", "refs/ckpt/default/1^3:manifest.json"))
    many = [f"gen{i:04d}/*-build-*/**/cache-{i}-*.tmp" for i in range(999)]
    manifest["overlay"]["include"] = ["*.log"] if policy == "one pattern" else many + ["*.log"]
    manifest["id"], manifest["number"] = "default/9", 9
    forge_checkpoint(repo, blobs={"manifest.json": json.dumps(manifest).encode()})
    (repo / "mine.log").write_text("keep me\n")
    ckpt(repo, "restore", "default/9")
    assert (repo / "mine.log").exists() == (policy != "one pattern")
