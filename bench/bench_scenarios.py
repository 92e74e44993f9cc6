"""The pairs: each is ``git ckpt`` and what a user would do instead, whole processes, on the same
tree and the same change, alternated, timed after a warm-up.

A pair returns :class:`Row` objects; ``run.py`` prints and saves them.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import zlib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable

from bench_inputs import BIN, TASK, BenchError, Tree, run, timed


@dataclass
class Row:
    """One line of the results table: ``a`` measured against ``b`` in the same run."""

    pair: str
    tree: str
    a: str
    b: str
    a_median: float | None = None
    b_median: float | None = None
    a_runs: list[float] = field(default_factory=list)
    b_runs: list[float] = field(default_factory=list)
    target: float | None = None        # a/b must be <= target
    status: str = "info"               # met | missed | info | skipped
    note: str = ""

    @property
    def ratio(self) -> float | None:
        if self.a_median is None or not self.b_median:
            return None
        return self.a_median / self.b_median

    def to_json(self) -> dict:
        return {
            "pair": self.pair, "tree": self.tree, "a": self.a, "b": self.b,
            "a_median_s": self.a_median, "b_median_s": self.b_median, "ratio": self.ratio,
            "a_runs_s": self.a_runs, "b_runs_s": self.b_runs, "target_ratio": self.target,
            "status": self.status, "note": self.note,
        }


@dataclass
class Variant:
    """One side of a pair: ``prepare(i)`` (untimed) sets the state, ``command(i)`` is timed,
    ``check()`` (untimed, after the first run only) returns None or what went wrong."""

    name: str
    prepare: Callable[[int], None]
    command: Callable[[int], list[str]]
    check: Callable[[], str | None] | None = None


@dataclass
class Settings:
    """How many times to run: ``warmup`` unrecorded rounds, then ``reps`` recorded ones."""

    reps: int
    warmup: int
    log: Callable[[str], None] = print


def measure(tree: Tree, variants: list[Variant], s: Settings, reps: int | None = None) -> tuple[dict[str, list[float]], list[str]]:
    """Run every variant ``warmup + reps`` times, rotating which goes first each round.

    Returns (name → recorded seconds, problems found by the checks)."""
    reps = s.reps if reps is None else reps
    times: dict[str, list[float]] = {v.name: [] for v in variants}
    problems: list[str] = []
    checked: set[str] = set()
    for i in range(s.warmup + reps):
        k = i % len(variants)
        for v in variants[k:] + variants[:k]:
            v.prepare(i)
            t = timed(v.command(i), tree.root, tree.env)
            if i >= s.warmup:
                times[v.name].append(t)
            if v.check and v.name not in checked:
                checked.add(v.name)
                bad = v.check()
                if bad:
                    problems.append(f"{v.name}: {bad}")
    return times, problems


def _row(pair: str, tree: Tree, times: dict[str, list[float]], a: str, b: str, target: float | None, note: str = "") -> Row:
    r = Row(pair, tree.name, a, b, statistics.median(times[a]), statistics.median(times[b]),
            times[a], times[b], target, note=note)
    if target is not None:
        r.status = "met" if r.ratio is not None and r.ratio <= target else "missed"
    return r


def skipped(pair: str, tree: str, a: str, b: str, why: str) -> Row:
    """A pair that could not run here, and why."""
    return Row(pair, tree, a, b, status="skipped", note=why)


def ckpt_json(tree: Tree, *args: str) -> dict:
    """Run ``git ckpt ARGS --json`` and return the result object."""
    out = run(["git", "ckpt", *args, "--json"], tree.root, tree.env).stdout
    return json.loads(out)["result"]


# ------------------------------------------------------------------------------ 1. save

PLAIN_CAPTURE = r"""set -e
idx="$PWD/.git/plain-capture-index"
if [ "$1" = copy ]; then cp .git/index "$idx"; else rm -f "$idx"; fi
export GIT_INDEX_FILE="$idx"
git add -A
tree=$(git write-tree)
unset GIT_INDEX_FILE
commit=$(git commit-tree -p HEAD -m "plain capture $2" "$tree")
git update-ref "refs/plain/$2" "$commit" ""
rm -f "$idx"
"""


def pair_save(tree: Tree, s: Settings, *, empty_index: bool) -> list[Row]:
    """``git ckpt save`` vs plain git capturing the same worktree into a commit and a ref."""
    tree.reset_base()
    n = [0]

    def prep(i: int) -> None:
        n[0] += 1
        tree.apply_change(f"save{n[0]}")

    variants = [
        Variant("git ckpt save", prep, lambda i: ["git", "ckpt", "save", "-m", f"bench {i}"]),
        Variant("plain git capture (index copy)", prep, lambda i: ["bash", "-c", PLAIN_CAPTURE, "plain", "copy", f"c{n[0]}"]),
    ]
    if empty_index:
        variants.append(Variant("plain git capture (empty index)", prep,
                                lambda i: ["bash", "-c", PLAIN_CAPTURE, "plain", "empty", f"e{n[0]}"]))
    times, problems = measure(tree, variants, s)
    rows = [_row("1 save", tree, times, "git ckpt save", "plain git capture (index copy)", 1.5,
                 "; ".join(problems))]
    if empty_index:
        rows.append(_row("1 save", tree, times, "git ckpt save", "plain git capture (empty index)", None,
                         "context: a script that starts from an empty index re-hashes every file"))
    tree.reset_base()
    return rows


# ------------------------------------------------------------------------------ 2. restore

STASH_PAIR = r"""set -e
git stash push -u -q -m "bench mess $2"
git stash apply --index -q "$1"
"""

DIFF_TAR_RECIPE = r"""set -e
S="$1"; cur="$2"; mkdir -p "$cur"
git diff --cached --binary > "$cur/staged.patch"
git diff --binary > "$cur/unstaged.patch"
{ git ls-files -z -o --exclude-standard; find bench-fixtures -type f -print0; } | tar --null -T - -czf "$cur/files.tgz"
git reset -q --hard
git clean -fdq
git apply --index "$S/staged.patch"
git apply "$S/unstaged.patch"
tar -xzf "$S/files.tgz"
"""


def restore_setup(tree: Tree, tmp: Path) -> dict:
    """Make state S (base + the change, half staged) and record it for every tool: a checkpoint,
    a stash commit, and the patches + tarball of the diff-and-tar recipe."""
    tree.reset_base()
    tree.apply_change("S")
    fp = tree.fingerprint()
    cid = ckpt_json(tree, "save", "-m", "state S")["id"]
    tree.git("stash", "push", "-u", "-q", "-m", "state S")
    tree.git("stash", "apply", "--index", "-q")
    stash = tree.git("rev-parse", "stash@{0}").decode().strip()
    recipe = tmp / f"recipe-{tree.name}"
    run(["bash", "-c", DIFF_TAR_RECIPE.split("git reset")[0], "recipe", str(recipe), str(recipe)], tree.root, tree.env)
    if tree.fingerprint() != fp:
        raise BenchError("recording state S changed it")
    return {"fp": fp, "ckpt": cid, "stash": stash, "recipe": recipe}


def _state_check(tree: Tree, fp: str) -> Callable[[], str | None]:
    def check() -> str | None:
        return None if tree.fingerprint() == fp else "did not reach state S exactly"
    return check


def pair_restore(tree: Tree, s: Settings, tmp: Path) -> list[Row]:
    """``git ckpt restore`` after a 10-file mess vs ``git stash`` and vs the diff-and-tar recipe."""
    st = restore_setup(tree, tmp)

    def prep(i: int) -> None:
        tree.apply_change("S")
        tree.apply_mess(f"r{i}-{os.urandom(4).hex()}")

    check = _state_check(tree, st["fp"])
    work = tmp / f"recipe-runs-{tree.name}"
    variants = [
        Variant("git ckpt restore", prep, lambda i: ["git", "ckpt", "restore", st["ckpt"]], check),
        Variant("git stash push -u + apply --index", prep, lambda i: ["bash", "-c", STASH_PAIR, "stash", st["stash"], str(i)], check),
        Variant("diff + tar.gz + reset + clean + apply + untar", prep,
                lambda i: ["bash", "-c", DIFF_TAR_RECIPE, "recipe", str(st["recipe"]), str(work / str(i))], check),
    ]
    times, problems = measure(tree, variants, s)
    note = "; ".join(problems)
    rows = [
        _row("2 restore", tree, times, "git ckpt restore", "git stash push -u + apply --index", 1.0, note),
        _row("2 restore", tree, times, "git ckpt restore", "diff + tar.gz + reset + clean + apply + untar", 1.0, note),
    ]
    tree.reset_base()
    return rows


# ------------------------------------------------------------------------------ 3. commit gate


def has_command(tree: Tree, name: str) -> bool:
    """Whether this git-ckpt has the subcommand ``name``."""
    return run(["git", "ckpt", name, "--help"], tree.root, tree.env, check=False).returncode == 0


def pair_commit(tree: Tree, s: Settings, tmp: Path) -> list[Row]:
    """``git commit`` with the gate hook installed vs ``git commit`` with no hook at all."""
    a, b = "git commit (gate hook)", "git commit (no hooks)"
    missing = [c for c in ("hooks", "gate", "verify") if not has_command(tree, c)]
    if missing:
        return [skipped("3 commit", tree.name, a, b, "git ckpt has no " + ", ".join(missing) + " command yet")]
    tree.reset_base()
    tree.apply_change("G")
    tree.git("add", "-A")
    run(["git", "ckpt", "trust"], tree.root, tree.env, check=False)
    steps = [["git", "ckpt", "hooks", "install"], ["git", "ckpt", "save", "-m", "gate"], ["git", "ckpt", "verify"]]
    for step in steps:
        proc = run(step, tree.root, tree.env, check=False)
        if proc.returncode != 0:
            tree.reset_base()
            return [skipped("3 commit", tree.name, a, b, f"{' '.join(step)} exited {proc.returncode}: "
                            + proc.stderr.decode(errors="replace").strip()[:300])]
    base = tree.git("rev-parse", "HEAD").decode().strip()
    no_hooks = tmp / "no-hooks"
    no_hooks.mkdir(exist_ok=True)

    def prep(i: int) -> None:
        tree.git("update-ref", "HEAD", base)  # the index (everything staged) stays as it is

    def gate_check() -> str | None:
        msg = tree.git("log", "-1", "--format=%B")
        return None if b"Ckpt-Verified" in msg else "the commit has no Ckpt-Verified trailer"

    variants = [
        Variant(a, prep, lambda i: ["git", "commit", "-q", "-m", f"bench commit {i}"], gate_check),
        Variant(b, prep, lambda i: ["git", "-c", f"core.hooksPath={no_hooks}", "commit", "-q", "-m", f"bench commit {i}"]),
    ]
    try:
        times, problems = measure(tree, variants, s)
    finally:
        tree.git("update-ref", "HEAD", base)
        run(["git", "ckpt", "hooks", "uninstall"], tree.root, tree.env, check=False)
        tree.reset_base()
    return [_row("3 commit", tree, times, a, b, 1.5, "; ".join(problems))]


# ------------------------------------------------------------------------------ 4. list

MAKE_CHECKPOINTS = r"""
# One real checkpoint through the library (task SEED), then copies of it numbered FIRST..LAST in
# each of TASKS: own manifest, meta commit and checkpoint commit each (message as save writes it,
# id and message replaced), created in-process and referenced with one `git update-ref --stdin`:
# thousands of whole `git ckpt save` runs would take minutes.
# argv: SEED FIRST LAST TASK...
import subprocess, sys
import msgspec, pygit2
from git_ckpt import config, overlay, snapshot
from git_ckpt.gitcore import Repo
from git_ckpt.model import encode
from git_ckpt.store import load
seed, first_n, last_n, tasks = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4:]
repo = Repo.discover(".")
cfg = config.load(repo)
snap = snapshot.capture(repo, cfg)
snap.selection = overlay.Selection([], [], [], [])  # list never reads the overlay
snap.overlay_info = snap.selection.info(cfg)
cid, commit = snapshot.write_checkpoint(repo, snap, task=seed, kind="manual", message="bench checkpoint seed")
first = load(repo, commit)
pg = pygit2.Repository(str(repo.git_dir))  # the harness may use pygit2; git_ckpt may not
c = pg[commit]
parents = list(c.parent_ids)
meta_tree = pg[parents[-1]].peel(pygit2.Tree)
lines = []
for task in tasks:
    for n in range(first_n, last_n + 1):
        new_id = f"{task}/{n}"
        m = msgspec.structs.replace(first.manifest, id=new_id, task=task, number=n, message=f"bench checkpoint {new_id}")
        tb = pg.TreeBuilder(meta_tree)
        tb.insert("manifest.json", pg.create_blob(encode(m)), 0o100644)
        meta = pg.create_commit(None, c.author, c.committer, f"ckpt meta {new_id}\n", tb.write(), [])
        body = c.message.replace("bench checkpoint seed", f"bench checkpoint {new_id}").replace(cid, new_id)
        new = pg.create_commit(None, c.author, c.committer, body, c.tree_id, parents[:-1] + [meta])
        lines.append(f"create refs/ckpt/{task}/{n} {new}\n")
subprocess.run(["git", "update-ref", "--stdin"], input="".join(lines).encode(), check=True)
"""


def pair_list(tree: Tree, s: Settings, count: int) -> list[Row]:
    """``git ckpt list`` of a task with ``count`` checkpoints vs ``git for-each-ref refs/ckpt``."""
    tree.reset_base()
    tree.apply_change("L")
    run([str(BIN / "python"), "-c", MAKE_CHECKPOINTS, "many", "2", str(count), "many"], tree.root, tree.env)
    got = len(ckpt_json(tree, "list", "--task", "many"))
    noop = lambda i: None  # noqa: E731
    a, b, c = "git ckpt list", "git for-each-ref refs/ckpt", "git for-each-ref (date, subject)"
    variants = [
        Variant(a, noop, lambda i: ["git", "ckpt", "list", "--task", "many"]),
        Variant(b, noop, lambda i: ["git", "for-each-ref", "refs/ckpt"]),
        Variant(c, noop, lambda i: ["git", "for-each-ref", "--format=%(refname) %(creatordate:relative) %(subject)", "refs/ckpt"]),
    ]
    times, _ = measure(tree, variants, s, reps=max(s.reps, 7) if s.reps > 1 else s.reps)
    note = f"{got} checkpoints listed"
    tree.reset_base()
    return [_row(f"4 list ({count})", tree, times, a, b, 3.0, note),
            _row(f"4 list ({count})", tree, times, a, c, None, "context: for-each-ref reading every commit")]


# ------------------------------------------------------------------------------ 5. stepback

STEPBACK_CHECKPOINT = r"""
from pathlib import Path
from stepback.engine import Engine
cp = Engine(Path(".").resolve()).checkpoint(label="state S")
print(cp.id)
"""


def stepback_venv(tmp: Path, env: dict[str, str]) -> tuple[Path | None, str]:
    """A venv under the bench directory with the PyPI package ``stepback``; (bin dir, version) or (None, why)."""
    venv = tmp / "stepback-venv"
    proc = subprocess.run([str(BIN / "python"), "-m", "venv", str(venv)], env=env, capture_output=True)
    if proc.returncode != 0:
        return None, "could not create a venv: " + proc.stderr.decode(errors="replace")[-300:]
    proc = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "stepback"], env=env, capture_output=True)
    if proc.returncode != 0:
        return None, "pip install stepback failed: " + proc.stderr.decode(errors="replace").strip()[-300:]
    ver = subprocess.run([str(venv / "bin" / "python"), "-c", "import importlib.metadata as m; print(m.version('stepback'))"],
                         env=env, capture_output=True).stdout.decode().strip()
    return venv / "bin", ver


def pair_stepback(tree: Tree, s: Settings, tmp: Path, install: bool) -> list[Row]:
    """``git ckpt restore`` vs ``stepback rewind N -y`` after the same 10-file mess."""
    a, b = "git ckpt restore", "stepback rewind"
    if not install:
        return [skipped("5 peer", tree.name, a, b, "--smoke does not install peer tools")]
    sb_bin, ver = stepback_venv(tmp, tree.env)
    if sb_bin is None:
        return [skipped("5 peer", tree.name, a, b, ver)]
    st = restore_setup(tree, tmp)
    env = dict(tree.env)
    sb_id = run([str(sb_bin / "python"), "-c", STEPBACK_CHECKPOINT], tree.root, env).stdout.decode().strip()

    def prep(i: int) -> None:
        tree.apply_change("S")
        tree.apply_mess(f"p{i}-{os.urandom(4).hex()}")

    check = _state_check(tree, st["fp"])
    variants = [
        Variant(a, prep, lambda i: ["git", "ckpt", "restore", st["ckpt"]], check),
        Variant(b, prep, lambda i: [str(sb_bin / "stepback"), "rewind", sb_id, "-y"], check),
    ]
    times, problems = measure(tree, variants, s, reps=min(s.reps, 3))
    tree.reset_base()
    return [_row("5 peer", tree, times, a, b, None,
                 f"stepback {ver}; restores worktree files only (no index, no ignored fixtures)"
                 + ("; " + "; ".join(problems) if problems else ""))]


# ------------------------------------------------------------------------------ 6. growth


def _dir_bytes(path: Path) -> int:
    total = 0
    for dirpath, _dirs, files in os.walk(path):
        for f in files:
            try:
                total += os.lstat(os.path.join(dirpath, f)).st_size
            except OSError:
                pass
    return total


def growth(tree: Tree, s: Settings, count: int) -> dict:
    """Bytes ``.git`` grows per checkpoint after ``git gc`` (each checkpoint: 10 changed files and
    one changed fixture file) against the zlib-compressed size of the changed files."""
    tree.reset_base()
    tree.git("gc", "-q", "--prune=now")
    before = _dir_bytes(tree.root / ".git")
    compressed = 0
    raw = 0
    # save --task writes into an existing task only: begin it, then go back to the bench's own
    run(["git", "ckpt", "task", "start", "growth"], tree.root, tree.env)
    run(["git", "ckpt", "task", "start", TASK], tree.root, tree.env)
    for j in range(count):
        for i, rel in enumerate(tree.changed):
            data = tree.originals[rel] + f"\n# growth step {j} file {i}\n".encode()
            (tree.root / rel).write_bytes(data)
            compressed += len(zlib.compress(data))
            raw += len(data)
        rel, data = tree.fixture_change(f"growth{j:04d}")
        (tree.root / rel).write_bytes(data)
        compressed += len(zlib.compress(data))
        raw += len(data)
        run(["git", "ckpt", "save", "--task", "growth", "-m", f"growth {j}"], tree.root, tree.env)
    tree.git("gc", "-q", "--prune=now")
    after = _dir_bytes(tree.root / ".git")
    per = (after - before) / count
    per_compressed = compressed / count
    limit = per_compressed + 2048
    tree.reset_base()
    return {
        "tree": tree.name, "checkpoints": count, "git_dir_before": before, "git_dir_after": after,
        "bytes_per_checkpoint": per, "changed_bytes_per_checkpoint": raw / count,
        "compressed_changed_bytes_per_checkpoint": per_compressed, "limit": limit,
        "status": "met" if per <= limit else "missed",
    }


# ------------------------------------------------------------------------------ 9. reftable


def reftable_copy(tree: Tree, tmp: Path) -> Tree | str:
    """The same committed tree in a repository using the reftable ref backend: a copy of
    ``tree``'s folder whose refs ``git refs migrate --ref-format=reftable`` moved (same objects,
    same index, same worktree).  Returns the new tree, or why it cannot be made with this git."""
    root = tmp / f"{tree.root.name}-reftable"
    shutil.rmtree(root, ignore_errors=True)
    tree.reset_base()
    shutil.copytree(tree.root, root, symlinks=True)
    proc = run(["git", "refs", "migrate", "--ref-format=reftable"], root, tree.env, check=False)
    if proc.returncode != 0:
        shutil.rmtree(root, ignore_errors=True)
        version = run(["git", "--version"], tree.root, tree.env).stdout.decode().strip()
        return f"needs git >= 2.46 (git refs migrate) on PATH; this is {version}"
    if run(["git", "rev-parse", "--show-ref-format"], root, tree.env).stdout.strip() != b"reftable":
        raise BenchError(f"{root} is not a reftable repository after git refs migrate")
    # the copy has new inodes and times: refresh the index's stat data (and the original's, so
    # that neither side re-hashes every file on its first save)
    for r in (root, tree.root):
        run(["git", "update-index", "-q", "--really-refresh"], r, tree.env, check=False)
    return replace(tree, name=f"{tree.name}", root=root)


def pair_reftable(tree: Tree, s: Settings, tmp: Path) -> list[Row]:
    """``git ckpt save`` and ``restore`` in a reftable repository vs the same tree and change in
    a files repository (refs through ``git`` processes there, through libgit2 here)."""
    rt = reftable_copy(tree, tmp)
    names = ("git ckpt save (reftable)", "git ckpt save (files)", "git ckpt restore (reftable)", "git ckpt restore (files)")
    if isinstance(rt, str):
        return [skipped("9 reftable", tree.name, names[0], names[1], rt), skipped("9 reftable", tree.name, names[2], names[3], rt)]
    sides = ((rt, "reftable"), (tree, "files"))
    n = [0]

    def save_prep(t: Tree) -> Callable[[int], None]:
        def prep(i: int) -> None:
            n[0] += 1
            t.apply_change(f"rt-save{n[0]}")
        return prep

    variants = [Variant(f"git ckpt save ({label})", save_prep(t),
                        lambda i, t=t: ["git", "-C", str(t.root), "ckpt", "save", "-m", f"bench {i}"]) for t, label in sides]
    times, problems = measure(tree, variants, s)
    rows = [_row("9 reftable", tree, times, names[0], names[1], None, "; ".join(problems))]

    states = {}
    for t, label in sides:
        t.reset_base()
        t.apply_change("S")
        states[label] = (t.fingerprint(), ckpt_json(t, "save", "-m", "state S")["id"])

    def restore_prep(t: Tree) -> Callable[[int], None]:
        def prep(i: int) -> None:
            t.apply_change("S")
            t.apply_mess(f"rt{i}-{os.urandom(4).hex()}")
        return prep

    variants = [Variant(f"git ckpt restore ({label})", restore_prep(t),
                        lambda i, t=t, label=label: ["git", "-C", str(t.root), "ckpt", "restore", states[label][1]],
                        _state_check(t, states[label][0])) for t, label in sides]
    times, problems = measure(tree, variants, s)
    rows.append(_row("9 reftable", tree, times, names[2], names[3], None, "; ".join(problems)))
    for t, _label in sides:
        t.reset_base()
    shutil.rmtree(rt.root, ignore_errors=True)
    return rows
