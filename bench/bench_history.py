"""Pairs for issue 14: fixed start-up cost, growth with history, the first push, and memory.

Each pair is whole processes, alternated and timed after a warm-up like the others
(:func:`bench_scenarios.measure`); a growth pair compares a command at N stored checkpoints with
the same command at 10.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import time
from pathlib import Path

from bench_inputs import BIN, BenchError, Tree, run
from bench_scenarios import MAKE_CHECKPOINTS, Row, Settings, Variant, _row, measure


def _small_repo(tmp: Path, env: dict[str, str], name: str, files: int) -> Tree:
    root = tmp / name
    root.mkdir()
    run(["git", "init", "-q", "-b", "main"], root, env)
    for i in range(files):
        sub = root / f"d{i % 10}"
        sub.mkdir(exist_ok=True)
        (sub / f"f{i}.txt").write_text(f"file {i}\n" * 20)
    run(["git", "add", "-A"], root, env)
    run(["git", "commit", "-q", "-m", "base"], root, env)
    return Tree(name, root, env, files, 0, {})


def pair_fixed(tmp: Path, env: dict[str, str], s: Settings) -> list[Row]:
    """Target 1: a save of one changed file in a 10-file repo against the same interpreter's
    ``python -c pass``; ``status`` and ``list`` of 10 checkpoints the same way."""
    tree = _small_repo(tmp, env, "ten-files", 10)
    py = str(BIN / "python")
    n = [0]

    def change(i: int) -> None:
        n[0] += 1
        (tree.root / "d0" / "f0.txt").write_text(f"change {n[0]}\n")

    for _ in range(10):
        change(0)
        run(["git", "ckpt", "save"], tree.root, env)
    noop = lambda i: None  # noqa: E731
    variants = [
        Variant("git ckpt save (1 changed file)", change, lambda i: ["git", "ckpt", "save"]),
        Variant("git ckpt status", noop, lambda i: ["git", "ckpt", "status"]),
        Variant("git ckpt list (10)", noop, lambda i: ["git", "ckpt", "list"]),
        Variant("git-ckpt --version", noop, lambda i: [str(BIN / "git-ckpt"), "--version"]),
        Variant("python -c pass", noop, lambda i: [py, "-c", "pass"]),
    ]
    times, _ = measure(tree, variants, s, reps=max(s.reps, 5) if s.reps > 1 else s.reps)
    base = "python -c pass"
    return [
        _row("7 fixed cost", tree, times, "git ckpt save (1 changed file)", base, 6.0),
        _row("7 fixed cost", tree, times, "git ckpt status", base, 5.0),
        _row("7 fixed cost", tree, times, "git ckpt list (10)", base, 5.0),
        _row("7 fixed cost", tree, times, "git-ckpt --version", base, None, "context: interpreter + click, no repository"),
    ]


def pair_list_all(tmp: Path, env: dict[str, str], s: Settings, tasks: int, per_task: int) -> list[Row]:
    """Target 6: ``git ckpt list --all`` of ``tasks`` x ``per_task`` checkpoints (each its own
    commit, manifest and meta commit, refs loose as the tool leaves them) against ``git
    for-each-ref refs/ckpt``, text and ``--json``."""
    tree = _small_repo(tmp, env, "many-tasks", 200)
    (tree.root / "d1" / "f1.txt").write_text("changed\n")
    run([str(BIN / "python"), "-c", MAKE_CHECKPOINTS, "seed", "1", str(per_task), *(f"t{t:03d}" for t in range(tasks))], tree.root, env)
    got = run(["git", "ckpt", "list", "--all", "--json"], tree.root, env).stdout.count(b'"id":')
    count = tasks * per_task + 1  # and the seed
    if got != count:
        raise BenchError(f"list --all listed {got} checkpoints, expected {count}")
    noop = lambda i: None  # noqa: E731
    a, aj, b = "git ckpt list --all", "git ckpt list --all --json", "git for-each-ref refs/ckpt"
    variants = [Variant(a, noop, lambda i: ["git", "ckpt", "list", "--all"]),
                Variant(aj, noop, lambda i: ["git", "ckpt", "list", "--all", "--json"]),
                Variant(b, noop, lambda i: ["git", "for-each-ref", "refs/ckpt"])]
    times, _ = measure(tree, variants, s)
    note = f"{count} checkpoints in {tasks + 1} tasks"
    return [_row(f"6 list --all ({count})", tree, times, a, b, 5.0, note),
            _row(f"6 list --all ({count})", tree, times, aj, b, 5.0, note)]


def _bulk(tree: Tree, task: str, first: int, last: int) -> None:
    """Checkpoint refs ``first..last`` of ``task`` pointing at the task's checkpoint 1 (loose,
    as git ckpt writes them): the refs are what grows; the objects are not what is measured."""
    commit = run(["git", "rev-parse", f"refs/ckpt/{task}/1"], tree.root, tree.env).stdout.decode().strip()
    data = "".join(f"create refs/ckpt/{task}/{n} {commit}\n" for n in range(first, last + 1))
    run(["git", "update-ref", "--stdin"], tree.root, tree.env, input=data.encode())


def pair_history(tmp: Path, env: dict[str, str], s: Settings, counts: tuple[int, ...]) -> list[Row]:
    """Target 6: ``save``, ``status``, ``log -n 20`` and ``show @`` at each count of stored
    checkpoints against the same command at 10 (a 200-file repo, refs as the tool leaves them),
    and ``list --all`` against ``git for-each-ref refs/ckpt``."""
    tree = _small_repo(tmp, env, "history", 200)
    n = [0]

    def change(i: int) -> None:
        n[0] += 1
        (tree.root / "d1" / "f1.txt").write_text(f"change {n[0]}\n")

    run(["git", "ckpt", "task", "start", "long"], tree.root, env)
    change(0)
    run(["git", "ckpt", "save"], tree.root, env)
    noop = lambda i: None  # noqa: E731
    cmds = {
        "save": (change, ["git", "ckpt", "save"]),
        "status": (noop, ["git", "ckpt", "status"]),
        "log -n 20": (noop, ["git", "ckpt", "log", "-n", "20"]),
        "show @": (noop, ["git", "ckpt", "show", "@"]),
    }
    at: dict[int, dict[str, list[float]]] = {}
    rows: list[Row] = []
    for count in counts:
        names = run(["git", "for-each-ref", "--format=%(refname:lstrip=3)", "refs/ckpt/long/"], tree.root, env).stdout.split()
        top = max(int(x) for x in names if x.isdigit())
        if count > top:
            _bulk(tree, "long", top + 1, count)
        variants = [Variant(name, prep, lambda i, c=cmd: c) for name, (prep, cmd) in cmds.items()]
        variants += [Variant("git ckpt list --all", noop, lambda i: ["git", "ckpt", "list", "--all"]),
                     Variant("git for-each-ref refs/ckpt", noop, lambda i: ["git", "for-each-ref", "refs/ckpt"])]
        times, _ = measure(tree, variants, s)
        at[count] = times
        # the bulk refs share checkpoint 1's commit, whose Ckpt-Row names long/1: list reads each
        # one's manifest (its fallback path); `--only listall` measures the target with real rows
        rows.append(_row(f"6 history ({count})", tree, times, "git ckpt list --all", "git for-each-ref refs/ckpt",
                         None, f"{count} refs to one commit: the manifest fallback of list"))
    first = counts[0]
    for count in counts[1:]:
        for name in cmds:
            r = Row(f"6 history ({count} vs {first})", tree.name, f"{name} at {count}", f"{name} at {first}")
            r.a_median, r.b_median = statistics.median(at[count][name]), statistics.median(at[first][name])
            r.a_runs, r.b_runs = at[count][name], at[first][name]
            r.target = 1.5 if name == "log -n 20" else 1.2
            r.status = "met" if r.ratio is not None and r.ratio <= r.target else "missed"
            rows.append(r)
    return rows


def pair_first_push(tmp: Path, env: dict[str, str], s: Settings, count: int) -> list[Row]:
    """Target 6: the first ``git ckpt push`` of ``count`` checkpoints against plain ``git push``
    of the same refs (``refs/ckpt/*``), each into a fresh bare repository."""
    tree = _small_repo(tmp, env, "pushing", 200)
    run(["git", "ckpt", "save"], tree.root, env)
    _bulk(tree, "default", 2, count)
    k = [0]

    def fresh(i: int) -> None:
        k[0] += 1
        bare = tmp / f"push-{k[0]}.git"
        run(["git", "init", "-q", "--bare", str(bare)], tmp, env)
        run(["git", "remote", "remove", "r"], tree.root, env, check=False)
        run(["git", "remote", "add", "r", str(bare)], tree.root, env)

    variants = [
        Variant("git ckpt push (first)", fresh, lambda i: ["git", "ckpt", "push", "r"]),
        Variant("git push refs/ckpt/*", fresh, lambda i: ["git", "push", "-q", "r", "refs/ckpt/*:refs/ckpt/*"]),
    ]
    times, _ = measure(tree, variants, s)
    return [_row(f"6 first push ({count})", tree, times, "git ckpt push (first)", "git push refs/ckpt/*", 3.0)]


def peak_rss(args: list[str], cwd: Path, env: dict[str, str]) -> int:
    """Peak resident set size in bytes of one whole-process run: the largest of the process and
    the children it waited for.  Through GNU ``/usr/bin/time -f %M`` when there is one: a child
    forked from this (large) bench process would inherit its peak (Linux keeps the high-water
    mark across exec), so ``wait4``'s ``ru_maxrss`` of a direct child is never below this
    process's own size; that is the fallback."""
    if os.path.exists("/usr/bin/time"):
        import tempfile

        with tempfile.NamedTemporaryFile(prefix="ckpt-rss-") as out:
            proc = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", out.name, *args], cwd=cwd, env=env,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            if proc.returncode != 0:
                raise BenchError(f"{args!r} exited {proc.returncode}: {proc.stderr.decode(errors='replace')[-2000:]}")
            return int(Path(out.name).read_text().split()[-1]) * 1024
    proc = subprocess.Popen(args, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _pid, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    err = proc.stderr.read() if proc.stderr else b""
    if proc.returncode != 0:
        raise BenchError(f"{args!r} exited {proc.returncode}: {err.decode(errors='replace')[-2000:]}")
    return usage.ru_maxrss * 1024


def memory(tree: Tree) -> list[Row]:
    """Target 7: peak RSS of ``save`` and ``restore`` on ``tree``, beside ``git add -A`` on an
    index copy (what git itself holds for the same walk)."""
    tree.reset_base()
    tree.apply_change(f"mem{time.time_ns()}")
    save = peak_rss(["git", "ckpt", "save", "-m", "memory"], tree.root, tree.env)
    plain = peak_rss(["bash", "-c", "cp .git/index .git/mem-index && GIT_INDEX_FILE=.git/mem-index git add -A && rm .git/mem-index"],
                     tree.root, tree.env)
    tree.apply_change(f"mem2{time.time_ns()}")
    restore = peak_rss(["git", "ckpt", "restore", "@"], tree.root, tree.env)
    tree.reset_base()
    out = []
    for name, val in (("git ckpt save", save), ("git ckpt restore @", restore)):
        r = Row("8 memory", tree.name, f"{name} peak RSS", "git add -A (index copy) peak RSS")
        r.note = f"{val / 1e6:.0f} MB vs {plain / 1e6:.0f} MB"
        out.append(r)
    return out


def memory_large(tmp: Path, env: dict[str, str], mb: int) -> list[Row]:
    """Target 7: peak RSS of ``git ckpt restore`` of a checkpoint holding an ``mb`` MB file, three
    ways, each in its own 10-file repository: tracked (written by ``git checkout-index``), in
    ``raw/`` (CRLF bytes that ``eol=lf`` would not give back: streamed from ``git cat-file``), and
    in the overlay (a file of the overlay tar, extracted in chunks); beside it ``git cat-file
    blob`` of the same blob to ``/dev/null`` (what git itself holds to read it) and the ``save``
    that made the checkpoint.  The restore is by path, after the file was replaced by 6 bytes, so
    its pre-restore save is small.  Measured, not asserted."""
    line = b"%09d a line of a large generated file, long enough to matter\r\n"
    count = mb * 1_000_000 // len(line % 0)
    out = []
    for name, rel, blob in (("tracked", "big.bin", "{ref}:big.bin"), ("raw/", "big.crlf", "{ref}^3:raw/big.crlf"),
                            ("overlay", "fixtures/big.fixture", "{ref}^3:overlay.tar")):
        tree = _small_repo(tmp, env, f"large-{rel.replace('/', '-')}", 10)
        root = tree.root
        (root / ".gitattributes").write_text("*.crlf text eol=lf\n")
        (root / ".gitignore").write_text("fixtures/\n")
        (root / ".ckpt.toml").write_text('[overlay]\ninclude = ["fixtures/"]\nmax_file_size = "2GiB"\n')
        run(["git", "add", "-A"], root, env)
        run(["git", "commit", "-q", "-m", "attributes"], root, env)
        path = root / rel
        path.parent.mkdir(exist_ok=True)
        with open(path, "wb") as fh:
            for start in range(0, count, 100_000):
                fh.write(b"".join(line % i for i in range(start, min(count, start + 100_000))))
        size = path.stat().st_size
        saved = peak_rss(["git", "ckpt", "save", "-m", "large file"], root, env)
        path.write_bytes(b"small\n")
        rss = peak_rss(["git", "ckpt", "restore", "1", "--", rel], root, env)
        if path.stat().st_size != size:
            raise BenchError(f"restore of the {name} file wrote {path.stat().st_size} bytes, not {size}")
        plain = peak_rss(["bash", "-c", f"git cat-file blob {blob.format(ref='refs/ckpt/default/1')} > /dev/null"], root, env)
        r = Row("8 memory", tree.name, f"git ckpt restore ({name} {size / 1e6:.0f} MB file) peak RSS",
                "git cat-file blob (same blob) peak RSS")
        r.note = f"{rss / 1e6:.0f} MB vs {plain / 1e6:.0f} MB; the save that made it: {saved / 1e6:.0f} MB"
        out.append(r)
        shutil.rmtree(root, ignore_errors=True)
    return out
