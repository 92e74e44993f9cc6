"""``git ckpt diff`` as data: a checkpoint against another or against the current worktree,
tree changes and overlay changes together (used by the CLI and the MCP server)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .config import Config
from .gitcore import Repo
from .model import OverlayFile, path_from_str, path_to_str
from .store import Checkpoint


@dataclass
class Comparison:
    """``old`` (a checkpoint id) against ``new`` (a checkpoint id or ``worktree``): the two
    trees, and the changed paths of each side as ``[{"status": A|D|M, "path": str}]``."""

    old: str
    new: str
    old_tree: str
    new_tree: str
    changes: list[dict[str, Any]]
    overlay: list[dict[str, Any]]
    index: list[dict[str, Any]]  # what the index stages differently (empty when neither side stages anything)

    def to_json(self) -> dict[str, Any]:
        return {"from": self.old, "to": self.new, "changes": self.changes, "overlay": self.overlay, "index": self.index}


def compare(repo: Repo, cfg: Config, old: Checkpoint, new: Checkpoint | None = None,
            paths: list[bytes] | None = None) -> Comparison:
    """Compare checkpoint ``old`` with ``new``, or with the worktree captured now (untracked
    files and the overlay included) when ``new`` is None; ``paths`` limits both sides.  The
    index is compared as ``status`` judges it (:func:`git_ckpt.standing.stages_same`): when
    the two stage the same, nothing; else the paths whose staged content differs (``index``)."""
    from .standing import stages_same

    if new is not None:
        new_tree, new_name, new_overlay = new.tree, new.id, new.manifest.overlay.files
        new_index, new_base = new.index_tree, new.manifest.base
    else:
        from .snapshot import capture

        from .overlay import as_restore_sees

        snap = capture(repo, cfg, read_only=True)
        # the overlay as a restore to ``old`` would judge it (status and restore agree)
        new_tree, new_name, new_overlay = snap.tree, "worktree", as_restore_sees(repo.workdir, old.manifest.overlay, snap.overlay_info.files)
        new_index, new_base = snap.index_tree, snap.base
    changes = [{"status": c.status, "path": path_to_str(c.path)} for c in repo.diff_trees(old.tree, new_tree, paths or None)]
    index = [] if stages_same(repo, old.index_tree, old.manifest.base, old.tree, new_index, new_base) else \
        [{"status": c.status, "path": path_to_str(c.path)} for c in repo.diff_trees(old.index_tree, new_index, paths or None)]
    return Comparison(old.id, new_name, old.tree, new_tree, changes,
                      overlay_changes(old.manifest.overlay.files, new_overlay, paths or []), index)


def overlay_changes(old_files: list[OverlayFile], new_files: list[OverlayFile], paths: list[bytes]) -> list[dict[str, Any]]:
    """``[{"status": A|D|M, "path": str}]`` between two overlay file lists (manifest entries)."""

    def keep(p: str) -> bool:
        b = path_from_str(p)
        return not paths or any(b == q or b.startswith(q.rstrip(b"/") + b"/") for q in paths)

    old = {f.path: (f.kind, f.mode, f.sha256) for f in old_files if keep(f.path)}
    new = {f.path: (f.kind, f.mode, f.sha256) for f in new_files if keep(f.path)}
    out = []
    for p in sorted(old.keys() | new.keys()):
        if p not in new:
            out.append({"status": "D", "path": p})
        elif p not in old:
            out.append({"status": "A", "path": p})
        elif old[p] != new[p]:
            out.append({"status": "M", "path": p})
    return out
