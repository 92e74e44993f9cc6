"""Pairs for the overlay: many small ignored files restored, and many overlay patterns matched.

* pair 10: ``git ckpt restore`` of a checkpoint whose overlay holds N small ignored files (the
  fixtures directory deleted before each run) against ``tar -xf`` of the same files: what a
  user who keeps fixtures in a tarball does instead.  Every entry is validated against the
  manifest, pre-flighted and written beside the worktree before it is linked in, so the ratio is
  the cost of those guarantees per file.
* pair 11: ``git ckpt save`` with 800 overlay patterns (each a few wildcards, as the limits
  allow) against the same save with one pattern: patterns are matched by RE2 in one pass, so
  the set's size should hardly show.

Whole processes, alternated and timed after a warm-up like the others
(:func:`bench_scenarios.measure`).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

from bench_inputs import Tree, run
from bench_scenarios import Row, Settings, Variant, _row, measure


def _fixture_repo(tmp: Path, env: dict[str, str], name: str, files: int) -> Tree:
    """A repository with ``files`` small ignored files under ``fx/`` (in 100 directories) named
    by its ``.ckpt.toml`` overlay, and a few tracked files."""
    root = tmp / name
    root.mkdir()
    run(["git", "init", "-q", "-b", "main"], root, env)
    (root / ".gitignore").write_text("/fx/\n")
    (root / ".ckpt.toml").write_text('[overlay]\ninclude = ["/fx/"]\n')
    for i in range(10):
        (root / f"src{i}.py").write_text(f"x = {i}\n" * 50)
    for i in range(files):
        d = root / "fx" / f"d{i % 100:02d}"
        d.mkdir(parents=True, exist_ok=True)
        (d / f"case{i:05d}.json").write_text('{"case": %d, "data": "%s"}\n' % (i, "y" * (i % 400)))
    run(["git", "add", "-A"], root, env)
    run(["git", "commit", "-q", "-m", "base"], root, env)
    return Tree(name, root, env, files, 0, {})


def _digest(root: Path) -> str:
    """The names, modes and bytes of every file under ``root`` (what both sides must write)."""
    h = hashlib.sha256()
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(filenames):
            path = os.path.join(dirpath, name)
            st = os.lstat(path)
            h.update(os.path.relpath(path, root).encode() + b"\0" + oct(st.st_mode).encode() + b"\0")
            with open(path, "rb") as fh:
                h.update(fh.read())
    return h.hexdigest()


def pair_overlay_restore(tmp: Path, env: dict[str, str], s: Settings, files: int) -> list[Row]:
    """Pair 10: restore of ``files`` overlay files vs ``tar -xf`` of them."""
    tree = _fixture_repo(tmp, env, f"overlay-{files}", files)
    fx = tree.root / "fx"
    want = _digest(fx)
    run(["git", "ckpt", "save", "-m", "fixtures"], tree.root, env)
    tarball = tmp / f"fx-{files}.tar"
    run(["tar", "-cf", str(tarball), "fx"], tree.root, env)

    def gone(i: int) -> None:
        shutil.rmtree(fx, ignore_errors=True)

    def check() -> str | None:
        return None if fx.is_dir() and _digest(fx) == want else "did not write the fixtures exactly"

    a, b = f"git ckpt restore (overlay of {files} files)", f"tar -xf (the same {files} files)"
    variants = [
        Variant(a, gone, lambda i: ["git", "ckpt", "restore", "@"], check),
        Variant(b, gone, lambda i: ["tar", "-xf", str(tarball)], check),
    ]
    times, problems = measure(tree, variants, s)
    return [_row("10 overlay restore", tree, times, a, b, 3.0, "; ".join(problems))]


def _patterns(n: int) -> list[str]:
    """``n`` distinct patterns within the limits (two wildcards in a component, three in all),
    none of which matches the fixtures but the last (``/fx/``)."""
    return [f"gen{i:04d}/*-build-*/**/cache-{i}-*.tmp" for i in range(n - 1)] + ["/fx/"]


def pair_overlay_patterns(tmp: Path, env: dict[str, str], s: Settings, files: int) -> list[Row]:
    """Pair 11: a save with 800 overlay patterns vs the same save with one; both archive the
    same ``files`` fixture files (one of them changed before each save)."""
    rows = []
    trees = {}
    for n in (1, 800):
        tree = _fixture_repo(tmp, env, f"patterns-{n}", files)
        pats = ", ".join(f'"{p}"' for p in _patterns(n))
        (tree.root / ".ckpt.toml").write_text(f"[overlay]\ninclude = [{pats}]\n")
        run(["git", "add", "-A"], tree.root, env)
        run(["git", "commit", "-q", "--allow-empty", "-m", "patterns"], tree.root, env)
        trees[n] = tree

    def changer(tree: Tree):
        def change(i: int) -> None:
            (tree.root / "fx" / "d00" / "case00000.json").write_text(f'{{"round": {i}}}\n')
        return change

    a, b = "git ckpt save (800 overlay patterns)", "git ckpt save (1 overlay pattern)"
    # one Tree per variant: measure() runs each command in the tree it is given, so both run in
    # their own repository through a cd
    variants = [
        Variant(a, changer(trees[800]), lambda i: ["git", "-C", str(trees[800].root), "ckpt", "save", "-m", f"r{i}"]),
        Variant(b, changer(trees[1]), lambda i: ["git", "-C", str(trees[1].root), "ckpt", "save", "-m", f"r{i}"]),
    ]
    times, problems = measure(trees[1], variants, s)
    for n, tree in trees.items():  # both archived the same fixtures
        shown = json.loads(run(["git", "ckpt", "show", "@", "--json"], tree.root, env).stdout)["result"]["overlay"]
        if len(shown) != files:
            problems.append(f"the save with {n} pattern(s) archived {len(shown)} files, not the {files} fixtures")
    rows.append(_row("11 overlay patterns", trees[800], times, a, b, 1.5, "; ".join(problems)))
    return rows
