"""Same-rounds before/after of ``git ckpt save`` against the plain-git capture (issue 14 target 2).

    .venv/bin/python bench/save_ab.py TREE HOME OLD_SRC [ROUNDS]

TREE is a bench tree kept by ``bench/run.py --keep`` (``real`` or ``synthetic``), HOME its
sealed home (``<kept dir>/home``), OLD_SRC a directory holding an older ``git_ckpt`` package
(``git archive REV git_ckpt | tar -x -C OLD_SRC``).  Each round makes the bench's kind of change
(10 modified files, 5 of them staged, a new file) before each command, runs the old code, this
checkout's code and the plain capture in random order, and records wall time and the CPU time
(user + sys) of the process tree; the first round is a warm-up.  Prints medians and ratios.
"""

from __future__ import annotations

import os
import random
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_scenarios import PLAIN_CAPTURE  # noqa: E402


def main() -> int:
    tree, home, old_src = sys.argv[1:4]
    rounds = int(sys.argv[4]) if len(sys.argv) > 4 else 6
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.update(HOME=home, PYTHONPYCACHEPREFIX=str(Path(home).parent / "pycache"))
    files = subprocess.run(["git", "ls-files"], cwd=tree, capture_output=True, text=True, env=env, check=True).stdout.split("\n")[1000:1010]
    run_save = "import sys; sys.argv = ['git-ckpt', 'save', '-m', 'ab']; from git_ckpt.cli import main; sys.exit(main())"
    cmds = {
        "old": [sys.executable, "-c", f"import sys; sys.path.insert(0, {old_src!r}); " + run_save],
        "new": [sys.executable, "-c", run_save],
        "plain": ["bash", "-c", PLAIN_CAPTURE, "plain", "copy"],
    }
    wall: dict[str, list[float]] = {k: [] for k in cmds}
    cpu: dict[str, list[float]] = {k: [] for k in cmds}
    n = 0
    for r in range(rounds):
        order = list(cmds)
        random.shuffle(order)
        for name in order:
            n += 1
            for i, f in enumerate(files):
                with open(os.path.join(tree, f), "a") as fh:
                    fh.write(f"# ab {n} {i}\n")
            Path(tree, f"ab_new_{n % 3}.txt").write_text(f"new {n}\n" * 20)
            subprocess.run(["git", "add", "--", *files[:5]], cwd=tree, env=env, check=True)
            args = cmds[name] + ([f"ab{n}-{os.getpid()}"] if name == "plain" else [])
            ru = resource.getrusage(resource.RUSAGE_CHILDREN)
            c0 = ru.ru_utime + ru.ru_stime
            t0 = time.perf_counter()
            proc = subprocess.run(args, cwd=tree, env=env, capture_output=True)
            dt = time.perf_counter() - t0
            if proc.returncode != 0:
                raise SystemExit(f"{name} failed: {proc.stderr.decode(errors='replace')[-1000:]}")
            ru = resource.getrusage(resource.RUSAGE_CHILDREN)
            if r:
                wall[name].append(dt)
                cpu[name].append(ru.ru_utime + ru.ru_stime - c0)
    for k in cmds:
        print(f"{k:6} wall {statistics.median(wall[k]) * 1000:5.0f} ms  cpu {statistics.median(cpu[k]) * 1000:5.0f} ms  "
              f"runs {[round(x * 1000) for x in wall[k]]}")
    plain = statistics.median(wall["plain"])
    print(f"ratio old/plain {statistics.median(wall['old']) / plain:.2f}x  new/plain {statistics.median(wall['new']) / plain:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
