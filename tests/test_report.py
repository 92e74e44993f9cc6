"""A picture of a task (issue 15): `git ckpt log --graph` and `git ckpt report --html FILE`,
the page checked in a real headless Chromium (rendered, every timeline node visible)."""

from __future__ import annotations

import json
import re
import shutil
import struct
import subprocess
import zlib

import pytest

from conftest import ckpt
from test_verify import verifier, write_config


def story(repo):
    """save (fails verify), save (passes, promoted), restore to 1, save from there, undo,
    handoff: every kind of event the timeline draws."""
    write_config(repo, verifier("tests", ["sh", "-c", "test -f ok"]))
    ckpt(repo, "task", "start", "demo", "--goal", "show <b>a</b> graph")
    (repo / "f").write_text("1\n")
    ckpt(repo, "save", "-m", "first try")
    ckpt(repo, "verify", rc=1)
    (repo / "f").write_text("2\n")
    (repo / "ok").write_text("")
    ckpt(repo, "save", "-m", "second <script>alert(1)</script>")
    ckpt(repo, "verify")
    ckpt(repo, "restore", "1")
    (repo / "g").write_text("3\n")
    ckpt(repo, "save", "-m", "third, from 1")
    ckpt(repo, "undo")
    ckpt(repo, "handoff")


def test_log_graph_draws_saves_results_jumps_promotion_handoff(repo):
    story(repo)
    lines = [re.sub(r"  \d{4}-\d\d-\d\d \d\d:\d\d:\d\d$", "", ln) for ln in ckpt(repo, "log", "--graph").out.splitlines()]
    assert lines == [
        "|   task started: show <b>a</b> graph",
        "* demo/1             manual      first try",
        "|   FAIL  tests failed on demo/1",
        "* demo/2             manual      second <script>alert(1)</script>",
        "|   pass  tests passed on demo/2",
        "@   promoted demo/2",
        "|<- restored demo/1  (left demo/2)",
        "* demo/3             manual      third, from 1",
        "|<- undo: back to demo/2  (left demo/3)",
        ">   handoff receipt given at demo/2",
    ], lines
    js = ckpt(repo, "log", "--graph", "--json").json()["result"]
    assert [(n["id"], n["parent"], n["lane"], n["promoted"]) for n in js["nodes"]] == [
        ("demo/1", None, 0, False), ("demo/2", "demo/1", 0, True), ("demo/3", "demo/1", 1, False)]
    assert js["lanes"] == 2
    assert ckpt(repo, "log", "--graph", "--task", "nothing", rc=4).err.startswith("error: no task nothing\n")


def test_log_graph_escapes_stored_text(repo):
    """A message with control characters (stored, possibly foreign text) is escaped."""
    (repo / "x").write_text("x\n")
    ckpt(repo, "save", "-m", "bad\x1b[31mred\rline")
    out = ckpt(repo, "log", "--graph").out
    assert "\x1b" not in out and "\r" not in out and "bad\\x1b[31mred\\rline" in out


def test_report_html_is_self_contained_and_escaped(repo):
    story(repo)
    res = ckpt(repo, "report", "--html", "report.html")
    assert res.out == "wrote report.html: task demo, 3 checkpoint(s), 2 jump(s)\n"
    page = (repo / "report.html").read_text()
    assert page.startswith("<!DOCTYPE html>")
    assert "<script>alert(1)</script>" not in page and "second &lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "show &lt;b&gt;a&lt;/b&gt; graph" in page
    # no network: nothing is fetched from anywhere
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:|//)""", page) and "@import" not in page and "url(http" not in page
    assert page.count('class="node ') == 3 and page.count('class="jump ') == 2
    assert 'class="node manual passed promoted"' in page and 'class="node manual failed"' in page
    assert "<code>A</code></td><td><code>g</code>" in page  # demo/3 added g against demo/1
    js = ckpt(repo, "report", "--html", "again.html", "--json").json()["result"]
    assert js == {"task": "demo", "checkpoints": 3, "pruned": 0, "damaged": 0, "lanes": 2, "jumps": 2, "promoted": "demo/2", "file": "again.html"}
    assert ckpt(repo, "report", "--html", "-", fsck=False).out.startswith("<!DOCTYPE html>")
    res = ckpt(repo, "report", rc=2, fsck=False)
    assert "--html" in res.err


def _chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def _browser(tmp_path, *args):
    exe = _chromium()
    if exe is None:
        pytest.skip("needs chromium (apt-get install -y chromium; .ci/run installs it)")
    profile = tmp_path / "chrome-profile"
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
             "--disable-sync", "--no-first-run", "--disable-quic", "--disable-dev-shm-usage", f"--user-data-dir={profile}",
             "--hide-scrollbars", "--force-device-scale-factor=1"]
    return subprocess.run([exe, *flags, *args], capture_output=True, timeout=120)


def _png_pixels(data: bytes) -> tuple[int, int, list[bytes]]:
    """Decode an 8-bit RGB/RGBA PNG (what Chromium writes): width, height, rows of RGB(A)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, width = 8, b"", 0
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            width, height, depth, ctype = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and ctype in (2, 6)
            bpp = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw = zlib.decompress(idat)
    stride = width * bpp
    rows, prev, i = [], bytearray(stride), 0
    for _ in range(height):
        f, line = raw[i], bytearray(raw[i + 1:i + 1 + stride])
        i += 1 + stride
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b, c = prev[x], (prev[x - bpp] if x >= bpp else 0)
            if f == 1:
                line[x] = (line[x] + a) & 255
            elif f == 2:
                line[x] = (line[x] + b) & 255
            elif f == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return width, bpp, rows


# The test's own instrumentation (the page has no script): measures every timeline node's box
# once the page has loaded into <pre id="layout"> and body[data-rendered].  It runs from the top
# of <head>, before the page's Content-Security-Policy (which forbids scripts) is in force.
MEASURE = """<script>addEventListener('load',function(){var out=[];
document.querySelectorAll('#timeline .node').forEach(function(g){var b=g.getBoundingClientRect();var s=getComputedStyle(g);
out.push({id:g.getAttribute('data-id'),x:Math.round(b.left),y:Math.round(b.top),w:Math.round(b.width),h:Math.round(b.height),
visible:s.visibility==='visible'&&s.display!=='none'&&b.width>0&&b.height>0});});
var pre=document.createElement('pre');pre.id='layout';pre.style.display='none';pre.textContent=JSON.stringify(out);
document.body.appendChild(pre);document.body.setAttribute('data-rendered',String(out.length));});</script>"""


def test_report_has_no_script(repo):
    """The product page runs nothing: no script element, no event-handler attribute, no
    javascript: URL, and a Content-Security-Policy that allows no script."""
    story(repo)
    page = ckpt(repo, "report", "--html", "-", fsck=False).out
    assert "<script" not in page.lower() and "javascript:" not in page.lower()
    assert not re.search(r"<[^>]*\son\w+\s*=", page), re.search(r"<[^>]*\son\w+\s*=", page)
    csp = re.search(r'http-equiv="Content-Security-Policy" content="([^"]*)"', page).group(1)
    assert "default-src 'none'" in csp and "script-src" not in csp, csp
    assert 'id="layout"' not in page and "data-rendered" not in page


def test_report_renders_in_headless_chromium(repo, tmp_path):
    """The page, opened by a real Chromium: every timeline node has a visible box in the first
    screen (measured by the test's own script, injected into a copy of the page that is
    otherwise byte-identical); the screenshot of the page itself shows each node's colour there."""
    story(repo)
    page = tmp_path / "report.html"
    ckpt(repo, "report", "--html", str(page))
    original = page.read_bytes()
    measured = tmp_path / "measured.html"
    measured.write_bytes(original.replace(b"<head>", b"<head>" + MEASURE.encode(), 1))
    assert measured.read_bytes().replace(MEASURE.encode(), b"", 1) == original
    proc = _browser(tmp_path, "--window-size=1200,800", "--virtual-time-budget=3000", "--dump-dom", measured.as_uri())
    dom = proc.stdout.decode("utf-8", "replace")
    assert proc.returncode == 0 and 'data-rendered="3"' in dom, (proc.returncode, proc.stderr[-2000:])
    layout = json.loads(re.search(r'<pre id="layout"[^>]*>(.*?)</pre>', dom, re.S).group(1).replace("&quot;", '"'))
    assert [n["id"] for n in layout] == ["demo/1", "demo/2", "demo/3"]
    for n in layout:
        assert n["visible"] and n["w"] >= 20 and n["h"] >= 20 and 0 <= n["x"] < 1200 and 0 <= n["y"] < 800, n
    shot = tmp_path / "shot.png"
    proc = _browser(tmp_path, f"--screenshot={shot}", "--window-size=1200,800", page.as_uri())
    assert proc.returncode == 0 and shot.exists(), proc.stderr[-2000:]
    width, bpp, rows = _png_pixels(shot.read_bytes())
    colours = {"demo/1": (0xcf, 0x22, 0x2e), "demo/2": (0x1a, 0x7f, 0x37), "demo/3": (0x09, 0x69, 0xda)}
    for n in layout:
        want = colours[n["id"]]
        # the node's circle centre: the box is the group (circle, ring, labels); its circle sits
        # at the top-centre for an unpromoted node, inside the ring for the promoted one
        cx = n["x"] + n["w"] // 2
        found = False
        for y in range(n["y"], min(n["y"] + n["h"], len(rows))):
            for x in range(max(0, cx - 6), min(width, cx + 7)):
                px = tuple(rows[y][x * bpp:x * bpp + 3])
                if all(abs(p - q) <= 24 for p, q in zip(px, want)):
                    found = True
                    break
            if found:
                break
        assert found, (n, want)


def test_report_to_a_path_that_cannot_be_written_is_an_io_error(repo, tmp_path):
    """A report file in a missing directory, over a directory or in /proc is exit 8 with one
    error line naming it, never an internal error; nothing is left behind."""
    ckpt(repo, "save", "-m", "one")
    (tmp_path / "adir").mkdir()
    for target in (tmp_path / "missing" / "r.html", "/proc/version"):
        res = ckpt(repo, "report", "--html", str(target), rc=8)
        assert res.err.startswith(f"error: cannot write {target}: "), res
        assert "internal error" not in res.err and res.err.count("\n") == 2
    res = ckpt(repo, "report", "--html", str(tmp_path / "adir"), rc=2)  # click's own check: a usage error
    assert "is a directory" in res.err and "internal error" not in res.err
    assert sorted(p.name for p in tmp_path.iterdir() if p.name != "repo") == ["adir"]
    assert list((tmp_path / "adir").iterdir()) == []
