"""Benchmark ``git ckpt`` against plain git, ``git stash``, a diff-and-tar recipe and a peer tool.

Run from the repository root:

    .venv/bin/python bench/run.py [--quick | --smoke] [--json OUT] [--only PAIRS] [--keep]

It builds its inputs in a temporary directory (a committed copy of this machine's standard
library, a synthetic tree of many small files, a fixture folder in the overlay), runs each pair
of whole-process commands several times after a warm-up, alternating them, and prints the
median of each and their ratio measured in the same run.  See the README section "Benchmark" and bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_history as hist  # noqa: E402
import bench_mcp  # noqa: E402
import bench_overlay  # noqa: E402
import bench_scenarios as sc  # noqa: E402
import bench_views  # noqa: E402
from bench_inputs import BenchError, make_env, real_tree, stdlib_source, synthetic_tree  # noqa: E402

MODES = {
    #          reps warmup synthetic files  fixture bytes  list  growth  real tree  stepback
    "full":  dict(reps=5, warmup=1, synthetic=100_000, fixtures=3_000_000, list=1000, growth=100, real="full", peer=True,
                  history=(10, 1000, 10_000), push=1000, listall=(100, 300), large_mb=300, overlay=20_000,
                  graph=20_000, scope=(9000, 3000)),
    "quick": dict(reps=3, warmup=1, synthetic=20_000, fixtures=3_000_000, list=1000, growth=20, real="quick", peer=True,
                  history=(10, 1000, 10_000), push=1000, listall=(100, 300), large_mb=300, overlay=20_000,
                  graph=20_000, scope=(9000, 3000)),
    "smoke": dict(reps=1, warmup=0, synthetic=300, fixtures=30_000, list=20, growth=3, real="smoke", peer=False,
                  history=(10, 30), push=20, listall=(3, 5), large_mb=5, overlay=200,
                  graph=200, scope=(300, 100)),
}
PAIRS = ("save", "restore", "commit", "list", "peer", "growth", "fixed", "history", "listall", "push", "memory", "mcp", "reftable", "overlay",
         "graph", "scope")
# the pairs measured on the copy of the standard library (the others build repositories of their own)
ON_REAL_TREE = {"save", "restore", "commit", "list", "peer", "growth", "memory", "mcp", "reftable"}


def machine() -> dict:
    """The facts RESULTS.md records about where the numbers come from."""
    import pygit2

    git = subprocess.run(["git", "--version"], capture_output=True, text=True).stdout.strip()
    return {
        "nproc": os.cpu_count(),
        "python": platform.python_version(),
        "git": git.replace("git version ", ""),
        "pygit2": pygit2.__version__,
        "libgit2": pygit2.LIBGIT2_VERSION,
        "platform": platform.platform(),
        "stdlib": str(stdlib_source()),
    }


def fmt_s(x: float | None) -> str:
    return "-" if x is None else f"{x * 1000:.0f} ms" if x < 10 else f"{x:.1f} s"


def table(rows: list[sc.Row]) -> str:
    """The results as a Markdown table."""
    out = ["| pair | tree | git ckpt side | median | compared with | median | ratio | target | status |",
           "| --- | --- | --- | ---: | --- | ---: | ---: | ---: | --- |"]
    for r in rows:
        ratio = "-" if r.ratio is None else f"{r.ratio:.2f}x"
        target = "-" if r.target is None else f"<= {r.target:g}x"
        status = r.status + (f" ({r.note})" if r.note else "")
        out.append(f"| {r.pair} | {r.tree} | {r.a} | {fmt_s(r.a_median)} | {r.b} | {fmt_s(r.b_median)} | {ratio} | {target} | {status} |")
    return "\n".join(out)


def growth_text(g: dict) -> str:
    return (f"| 6 growth | {g['tree']} | {g['checkpoints']} checkpoints, then git gc | "
            f"{g['bytes_per_checkpoint']:.0f} B/checkpoint | compressed changed files "
            f"({g['changed_bytes_per_checkpoint']:.0f} B raw) | {g['compressed_changed_bytes_per_checkpoint']:.0f} B | "
            f"- | <= {g['limit']:.0f} B | {g['status']} |")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    grp = ap.add_mutually_exclusive_group()
    grp.add_argument("--quick", action="store_true", help="smaller trees, fewer repetitions (a minute or two)")
    grp.add_argument("--smoke", action="store_true", help="tiny trees, one repetition, no peer tool (for the test suite)")
    ap.add_argument("--json", metavar="OUT", help="also write the results as JSON to OUT")
    ap.add_argument("--only", metavar="PAIRS", help=f"comma-separated subset of {','.join(PAIRS)}")
    ap.add_argument("--reps", type=int, help="recorded repetitions per command (default by mode)")
    ap.add_argument("--keep", action="store_true", help="keep the temporary directory and print its path")
    args = ap.parse_args(argv)
    mode = "quick" if args.quick else "smoke" if args.smoke else "full"
    m = MODES[mode]
    only = set(args.only.split(",")) if args.only else set(PAIRS)
    unknown = only - set(PAIRS)
    if unknown:
        ap.error(f"unknown pairs: {', '.join(sorted(unknown))}")
    settings = sc.Settings(reps=args.reps or m["reps"], warmup=m["warmup"], log=print)
    started = time.monotonic()
    tmp = Path(tempfile.mkdtemp(prefix="ckpt-bench-"))

    def log(text: str) -> None:
        print(f"[{time.monotonic() - started:6.1f}s] {text}", flush=True)

    rows: list[sc.Row] = []
    growth: dict | None = None
    info = machine()
    try:
        env = make_env(tmp)
        log(f"mode {mode}: building trees in {tmp}")
        trees = []
        if only & ON_REAL_TREE:  # not copied for a run of pairs that do not use it
            real = real_tree(tmp, env, size=m["real"], fixture_bytes=m["fixtures"])
            log(f"real tree: {real.files} files, {real.bytes / 1e6:.0f} MB (copy of {stdlib_source()})")
            trees.append(real)
        if only & {"save", "restore", "commit", "memory", "mcp"}:
            synth = synthetic_tree(tmp, env, files=m["synthetic"], fixture_bytes=m["fixtures"])
            log(f"synthetic tree: {synth.files} files, {synth.bytes / 1e6:.0f} MB")
            trees.append(synth)
        for tree in trees:
            if "save" in only:
                log(f"pair 1 save on {tree.name}")
                rows += sc.pair_save(tree, settings, empty_index=(tree is real))
            if "restore" in only:
                log(f"pair 2 restore on {tree.name}")
                rows += sc.pair_restore(tree, settings, tmp)
            if "commit" in only:
                log(f"pair 3 commit on {tree.name}")
                rows += sc.pair_commit(tree, settings, tmp)
        if "list" in only:
            log(f"pair 4 list of {m['list']} checkpoints on {real.name}")
            rows += sc.pair_list(real, settings, m["list"])
        if "peer" in only:
            log(f"pair 5 peer tool (stepback) on {real.name}")
            rows += sc.pair_stepback(real, settings, tmp, install=m["peer"])
        if "fixed" in only:
            log("pair 7 fixed cost: a 10-file repository")
            rows += hist.pair_fixed(tmp, env, settings)
        if "history" in only:
            log(f"pair 6 history: {', '.join(map(str, m['history']))} stored checkpoints")
            rows += hist.pair_history(tmp, env, settings, m["history"])
        if "listall" in only:
            t, per = m["listall"]
            log(f"pair 6 list --all of {t * per} checkpoints in {t} tasks")
            rows += hist.pair_list_all(tmp, env, settings, t, per)
        if "push" in only:
            log(f"pair 6 first push of {m['push']} checkpoints")
            rows += hist.pair_first_push(tmp, env, settings, m["push"])
        if "memory" in only:
            for tree in trees:
                log(f"pair 8 memory on {tree.name}")
                rows += hist.memory(tree)
            log(f"pair 8 memory: restore of a {m['large_mb']} MB file (tracked, raw/, overlay)")
            rows += hist.memory_large(tmp, env, m["large_mb"])
        if "mcp" in only:
            for tree in trees:
                log(f"pair 5 mcp: ckpt_save through the resident server on {tree.name}")
                rows += bench_mcp.pair_mcp_save(tree, settings)
            log("pair 5 mcp: the Claude Code Stop hook with nothing changed")
            rows += bench_mcp.pair_stop_hook(tmp, env, settings)
        if "reftable" in only:
            log(f"pair 9 save and restore in a reftable repository vs files, on {real.name}")
            rows += sc.pair_reftable(real, settings, tmp)
        if "overlay" in only:
            log(f"pair 10 overlay restore of {m['overlay']} files vs tar -xf; pair 11 save with 800 overlay patterns vs 1")
            rows += bench_overlay.pair_overlay_restore(tmp, env, settings, m["overlay"])
            rows += bench_overlay.pair_overlay_patterns(tmp, env, settings, m["overlay"] // 10)
        if "graph" in only:
            log(f"pair 12 log --graph of a {m['graph']}-event ledger that restores before every save vs log")
            rows += bench_views.pair_graph(tmp, env, settings, m["graph"])
        if "scope" in only:
            words, files = m["scope"]
            log(f"pair 13 diff --scope with a {words}-word next step and {files} new files vs diff")
            rows += bench_views.pair_scope(tmp, env, settings, words, files)
        if "growth" in only:
            log(f"pair 6 growth: {m['growth']} checkpoints on {real.name}")
            growth = sc.growth(real, settings, m["growth"])
    except BenchError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    finally:
        if args.keep:
            print(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    elapsed = time.monotonic() - started
    print()
    print(table(rows))
    if growth:
        print(growth_text(growth))
    print()
    print(f"machine: {info['nproc']} cores, python {info['python']}, git {info['git']}, "
          f"pygit2 {info['pygit2']} / libgit2 {info['libgit2']}; mode {mode}, "
          f"{settings.reps} recorded runs after {settings.warmup} warm-up; total {elapsed:.0f} s")
    if args.json:
        data = {
            "schema": "ckpt-bench/1",
            "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "mode": mode, "reps": settings.reps, "warmup": settings.warmup, "seconds": elapsed,
            "machine": info, "rows": [r.to_json() for r in rows], "growth": growth,
        }
        Path(args.json).write_text(json.dumps(data, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
