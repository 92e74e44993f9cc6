"""git ckpt show: one checkpoint in full."""

from __future__ import annotations

import click

from ..words import counted
from . import emit, json_option, open_repo, say


@click.command("show")
@click.argument("ckpt", required=False)
@json_option
def command(ckpt: str | None, as_json: bool) -> int:
    """Show CKPT (default @): manifest, files changed vs its base, overlay contents, results.

    A result this repository's own git ckpt verify did not record (fetched from a teammate) is
    marked "fetched: not evidence here" (JSON: "local": false): it is never reused, never
    promotes and never satisfies the gate.
    """
    from .. import store, views
    from ..evidence import about, evidence_tasks, mark_local, overlay_digest

    repo = open_repo()
    cp = store.resolve_default(repo) if ckpt is None else store.resolve(repo, ckpt, command="show")
    data = views.show(repo, cp)
    lines = [r for r in data["results"] if "verifier" in r]
    for r, own, ok in zip(lines, mark_local(repo, lines, evidence_tasks(repo, cp), tree=cp.tree, overlay=overlay_digest(cp)),
                          about(lines, cp.tree, overlay_digest(cp)), strict=True):
        r["local"] = own
        r["about"] = ok  # False: a line about another checkpoint's content (copied onto this note)

    def human() -> None:
        from ..model import escape as e

        m = cp.manifest
        remote = store.split_task(cp.id.rpartition("/")[0])[0]
        say(f"checkpoint {cp.id}" + (f"  (promoted{' on ' + remote if remote else ''})" if data["promoted"] else ""))
        say(f"commit:   {cp.commit}")
        say(f"kind:     {m.kind}")
        say(f"created:  {e(m.created_at)} by {e(m.author)} on {e(m.host)}")
        say(f"base:     {m.base or '(unborn branch)'}{' on ' + e(m.branch) if m.branch else ' (detached)'}")
        if m.message:  # a teammate's message names their ids (T/1): REMOTE:T/1 here, as log and list say
            owner = cp.id.rpartition("/")[0]
            say(f"message:  {e(store.shown_ids(owner, m.message) if store.is_fetched_task(owner) else m.message)}")
        if m.agent:
            from ..model import path_display

            say(f"agent:    {e(views.agent_label(m.agent, None))}"
                + (f" (session {path_display(m.agent_session.encode('utf-8', 'surrogateescape'))})" if m.agent_session else ""))
        if m.next:
            say(f"next:     {e(m.next)}")
        if m.hypothesis:
            say(f"hypothesis: {e(m.hypothesis)}")
        for label, items in (("intent-to-add", m.intent_to_add), ("skip-worktree", m.skip_worktree), ("conflicts", m.conflicts), ("skipped", m.skipped)):
            if items:
                say(f"{label}: {len(items)} path(s)")
        say(f"changed vs base ({len(data['changed'])}):")
        for c in data["changed"]:
            say(f"  {c['status']} {e(c['path'])}")
        if data["overlay"]:
            say(f"overlay ({counted(len(data['overlay']), 'entry', 'entries')}):")
            for o in data["overlay"]:
                say(f"  {e(o['path'])} ({o['kind']}, {counted(o['size'], 'byte')})")
        if data["results"]:
            from ..words import result_word

            say("results:")
            seen: dict[str, int] = {}
            order: list[str] = []
            for r in data["results"]:
                if "verifier" not in r:
                    text = f"  {e(str(r))}"
                else:
                    try:
                        took = f"{float(r.get('duration') or 0):.1f} s"
                    except (TypeError, ValueError):
                        took = "? s"
                    text = (f"  {e(str(r['verifier']))}: {e(str(result_word(r.get('status', '?'), r.get('exit_code'))))} (exit {e(str(r.get('exit_code')))}, {took})"
                            + ("" if r.get("local") else " [not about this checkpoint: not evidence]" if not r.get("about") else " [fetched: not evidence here]"))
                if text not in seen:
                    order.append(text)
                seen[text] = seen.get(text, 0) + 1
            for text in order:  # identical lines (the same result reused or merged twice) once, counted
                say(text + (f" ({seen[text]} times)" if seen[text] > 1 else ""))

    emit("show", data, as_json, human)
    return 0
