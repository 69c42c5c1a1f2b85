#!/usr/bin/env python3
"""From an outside edit to the first answer that includes it: tether against
Serena and agent-lsp, side by side in one run, each driven through its MCP
stdio server by one client (the official Python MCP SDK), all three on the
same pyright and the same project.

The project is the FastAPI 0.115.0 source distribution, downloaded from
PyPI. For each server: start it, list its tools, ask for the references of
`fastapi.param_functions.Depends` (its `def` line) until the answer is
complete (493 references in 152 files, the declaration counted), then, three
times, append a function calling `fastapi.param_functions.Depends()` to
`fastapi/applications.py` with plain file I/O and ask again at once, and
every 100 ms after, until an answer includes the new call. Then the probes
are removed and the server is asked until it notices, the client closes,
and every process the server left behind is counted and killed.

Everything it installs lands in target/bench-peers: a virtualenv per peer
(serena-agent 2.1.0; agent-lsp 0.23.5, a Go binary on PyPI; the client's
mcp 2.3.0) and the FastAPI sdist. Neither peer can fetch anything here:
Serena is pointed at the installed pyright (`ls_path`), agent-lsp is given
it on its command line. tether is the release build (`cargo build
--release` first). Peers that leave the declaration out of their answer
get it added back, so every count means the same thing.

Run:  python3 benches/outside_edits.py [--peers tether,serena,agentlsp-direct,agentlsp-daemon] [--trials 3]
Prints one `RESULT {json}` line per server, then a summary.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tarfile
import time
import traceback
import uuid
from dataclasses import dataclass, field
from typing import Any, Callable

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORK = os.path.join(REPO, "target", "bench-peers")
PROJECT = os.path.join(WORK, "fastapi-src")
OUT = os.path.join(WORK, "out")
CLIENT_VENV = os.path.join(WORK, "client-venv")
SERENA_VENV = os.path.join(WORK, "serena-venv")
SERENA_HOME = os.path.join(WORK, "serena-home")
AGENTLSP_VENV = os.path.join(WORK, "agentlsp-venv")
AGENTLSP_HOME = os.path.join(WORK, "agentlsp-home")
TETHER = os.path.join(REPO, "target", "release", "tether")

TARGET_REL = "fastapi/param_functions.py"
EDIT_REL = "fastapi/applications.py"
EXPECTED_REFS, EXPECTED_FILES = 493, 152
PROBE_MARKER = "\n\n# >>> outside_edits.py probes: everything from here down is temporary >>>\n"
CALL_TIMEOUT_S, INIT_TIMEOUT_S, COLD_LIMIT_S, EDIT_LIMIT_S = 300.0, 120.0, 600.0, 60.0


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------
# Set-up: venvs, the project, and a re-exec under the client's venv.

def pip(venv: str, *packages: str) -> None:
    if not os.path.exists(os.path.join(venv, "bin", "python")):
        subprocess.run([sys.executable, "-m", "venv", venv], check=True)
    subprocess.run([os.path.join(venv, "bin", "pip"), "install", "--quiet", "--disable-pip-version-check", *packages],
                   check=True)


def set_up() -> None:
    os.makedirs(WORK, exist_ok=True)
    if not os.path.exists(os.path.join(CLIENT_VENV, "bin", "python")):
        log("installing the MCP client (mcp==2.3.0)")
        pip(CLIENT_VENV, "mcp==2.3.0")
    if not os.path.exists(os.path.join(SERENA_VENV, "bin", "serena")):
        log("installing serena-agent==2.1.0")
        pip(SERENA_VENV, "serena-agent==2.1.0")
    if not os.path.exists(os.path.join(AGENTLSP_VENV, "bin", "agent-lsp")):
        log("installing agent-lsp==0.23.5")
        pip(AGENTLSP_VENV, "agent-lsp==0.23.5")
    if not os.path.isdir(PROJECT):
        log("downloading the FastAPI 0.115.0 sdist")
        dl = os.path.join(WORK, "dl")
        subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "fastapi==0.115.0", "--no-binary", ":all:",
                        "--no-deps", "-d", dl], check=True)
        with tarfile.open(os.path.join(dl, "fastapi-0.115.0.tar.gz")) as t:
            t.extractall(WORK, filter="data")
        os.rename(os.path.join(WORK, "fastapi-0.115.0"), PROJECT)
    if not os.path.exists(TETHER):
        log("building tether (release)")
        subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=REPO, check=True)


if __name__ == "__main__" and os.path.realpath(sys.prefix) != os.path.realpath(CLIENT_VENV):
    set_up()
    os.execv(os.path.join(CLIENT_VENV, "bin", "python"), [os.path.join(CLIENT_VENV, "bin", "python"), *sys.argv])

import anyio  # noqa: E402  (the client venv has them)
from mcp import ClientSession, StdioServerParameters, stdio_client  # noqa: E402

PYRIGHT = shutil.which("pyright-langserver") or "/usr/bin/pyright-langserver"


# ---------------------------------------------------------------------------
# Answers: each parser returns (references as (relpath, line | None), total
# as the server states it) or raises NotAnAnswer.

class NotAnAnswer(Exception):
    pass


def _rel(path: str) -> str:
    path = path.removeprefix("file://")
    return path[len(PROJECT) + 1:] if path.startswith(PROJECT + "/") else path


def parse_tether(text: str, data: Any) -> tuple[list, int]:
    """tether's `lsp references`: the header states the total; the page
    (50 a page) is in the structured content."""
    m = re.match(r"(\d+) references? to `Depends` in (\d+) files?", text)
    if not m or not isinstance(data, dict):
        raise NotAnAnswer(text[:200])
    page = [(r["path"], r["line"]) for r in data.get("references", [])]
    return page, int(m.group(1))


def parse_serena(text: str, _data: Any) -> tuple[list, int]:
    """Serena's find_referencing_symbols: {relpath: {kind: [entry, …]}}, one
    entry a reference, its line marked `  >  NNN:` (0-based)."""
    try:
        data = json.loads(text)
    except ValueError:
        raise NotAnAnswer(text[:200])
    if not isinstance(data, dict):
        raise NotAnAnswer(text[:200])
    locs = []
    for rel, by_kind in data.items():
        if not isinstance(by_kind, dict):
            raise NotAnAnswer(text[:200])
        for entries in by_kind.values():
            for e in entries:
                m = re.search(r"(?m)^\s*>\s*(\d+):", e.get("content_around_reference", ""))
                locs.append((rel, int(m.group(1)) + 1 if m else None))
    return locs, len(locs)


def parse_agentlsp(text: str, _data: Any) -> tuple[list, int]:
    """agent-lsp's find_references, GCF: `## [N]{cols}` then N `a|b|…` rows
    (1-based lines); `## [0]` when none; an error text while indexing."""
    lines = text.splitlines()
    for i, ln in enumerate(lines):
        m = re.match(r"^## \[(\d+)\](?:\{([^}]*)\})?", ln)
        if not m:
            continue
        n = int(m.group(1))
        if n == 0:
            return [], 0
        cols = m.group(2).split(",")
        fi, li = cols.index("FilePath"), cols.index("StartLine")
        out = [(_rel(r.split("|")[fi]), int(r.split("|")[li])) for r in lines[i + 1:i + 1 + n]]
        if len(out) != n:
            raise NotAnAnswer(f"GCF header says {n} rows, got {len(out)}")
        return out, n
    raise NotAnAnswer(text[:200])


# ---------------------------------------------------------------------------
# The servers.

@dataclass
class Peer:
    name: str
    command: str
    args: list[str]
    env: dict[str, str]
    prepare: Callable[[], None]
    setup_calls: list[tuple[str, dict]]
    ref_call: Callable[[int, int], tuple[str, dict]]
    parse: Callable[[str, Any], tuple[list, int]]
    lists_everything: bool  # False: a page, so the probe is seen through the total
    notes: str = ""


def prepare_tether() -> None:
    pass


def prepare_serena() -> None:
    """Serena's config comes from its own templates, changing only: pyright
    from the installed one (no uv download), no dashboard or GUI log, one
    tool per operation, its project data out of the tree, and the project's
    language named (its detection can save an empty list). Cold every run."""
    lib = os.path.join(SERENA_VENV, "lib")
    site = next(os.path.join(lib, d, "site-packages") for d in os.listdir(lib))
    res = os.path.join(site, "serena", "resources")

    def setkey(text: str, key: str, val: str) -> str:
        text, n = re.subn(rf"(?m)^{key}:.*$", f"{key}: {val}", text)
        if n != 1:
            raise RuntimeError(f"serena template: {key} not found exactly once")
        return text

    cfg = open(os.path.join(res, "serena_config.template.yml"), encoding="utf-8").read()
    cfg = setkey(cfg, "ls_specific_settings", json.dumps({"python": {"ls_path": PYRIGHT}}))
    cfg = setkey(cfg, "web_dashboard", "False")
    cfg = setkey(cfg, "gui_log_window", "False")
    cfg = setkey(cfg, "agent_interface", "tools")
    cfg = setkey(cfg, "project_serena_folder_location", f'"{SERENA_HOME}/projects/$projectFolderName/.serena"')
    cfg = setkey(cfg, "projects", f"\n  - {PROJECT}")
    proj = f"{SERENA_HOME}/projects/{os.path.basename(PROJECT)}/.serena"
    shutil.rmtree(proj, ignore_errors=True)
    os.makedirs(proj)
    with open(f"{SERENA_HOME}/serena_config.yml", "w", encoding="utf-8") as f:
        f.write(cfg)
    pyml = open(os.path.join(res, "project.template.yml"), encoding="utf-8").read()
    pyml = setkey(pyml, "project_name", f'"{os.path.basename(PROJECT)}"')
    pyml = setkey(pyml, "language_servers", '["python"]')
    with open(f"{proj}/project.yml", "w", encoding="utf-8") as f:
        f.write(pyml)


def prepare_agentlsp() -> None:
    """agent-lsp keeps its reference cache and daemon state under $HOME: a
    HOME of its own, emptied, so every run is cold."""
    shutil.rmtree(AGENTLSP_HOME, ignore_errors=True)
    os.makedirs(AGENTLSP_HOME)


def peers() -> dict[str, Peer]:
    tether = Peer(
        "tether", TETHER, ["serve", "--trusted", "--workdir", PROJECT], {}, prepare_tether, [],
        lambda line, col: ("lsp", {"action": "references", "file": TARGET_REL, "line": line, "symbol": "Depends"}),
        parse_tether, False, "tether serve (this build); pyright",
    )
    serena = Peer(
        "serena", os.path.join(SERENA_VENV, "bin", "serena"),
        ["start-mcp-server", "--project", PROJECT, "--context", "desktop-app", "--agent-interface", "tools",
         "--transport", "stdio", "--enable-web-dashboard", "False", "--open-web-dashboard", "False",
         "--enable-gui-log-window", "False"],
        {"SERENA_HOME": SERENA_HOME}, prepare_serena, [],
        lambda line, col: ("find_referencing_symbols", {"name_path": "Depends", "relative_path": TARGET_REL}),
        parse_serena, True, "serena-agent 2.1.0; pyright through ls_path",
    )
    alsp = dict(
        command=os.path.join(AGENTLSP_VENV, "bin", "agent-lsp"), args=[f"python:{PYRIGHT},--stdio"],
        env={"HOME": AGENTLSP_HOME}, prepare=prepare_agentlsp,
        ref_call=lambda line, col: ("find_references",
                                    {"file_path": f"{PROJECT}/{TARGET_REL}", "line": line, "column": col}),
        parse=parse_agentlsp, lists_everything=True,
    )
    direct = Peer(name="agentlsp-direct", setup_calls=[], notes="agent-lsp 0.23.5, direct mode", **alsp)
    daemon = Peer(name="agentlsp-daemon", setup_calls=[("start_lsp", {"root_dir": PROJECT, "language_id": "python"})],
                  notes="agent-lsp 0.23.5, daemon mode (start_lsp)", **alsp)
    return {p.name: p for p in (tether, serena, direct, daemon)}


# ---------------------------------------------------------------------------
# Processes a server left behind: found by a marker in their environment.

def _read(path: str) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError:
        return b""


def marked(marker: str) -> dict[int, str]:
    needle = f"OUTSIDE_EDITS_RUN={marker}".encode()
    found = {}
    for d in os.listdir("/proc"):
        if d.isdigit() and int(d) != os.getpid() and needle in _read(f"/proc/{d}/environ").split(b"\0"):
            found[int(d)] = _read(f"/proc/{d}/cmdline").replace(b"\0", b" ").decode(errors="replace").strip()
    return {p: c for p, c in found.items() if c}


def kill(pids: dict[int, str]) -> None:
    for pid in pids:
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    time.sleep(2)
    for pid, cmd in pids.items():
        if _read(f"/proc/{pid}/cmdline").replace(b"\0", b" ").decode(errors="replace").strip() == cmd:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


# ---------------------------------------------------------------------------
# The project file the probes go into.

def restore() -> None:
    p = os.path.join(PROJECT, EDIT_REL)
    s = open(p, encoding="utf-8").read()
    i = s.find(PROBE_MARKER)
    if i >= 0:
        with open(p, "w", encoding="utf-8") as f:
            f.write(s[:i])


def append_probe(k: int, tag: str) -> int:
    """Appends probe `k`; returns the 1-based line of its call."""
    p = os.path.join(PROJECT, EDIT_REL)
    s = open(p, encoding="utf-8").read()
    text = ("" if PROBE_MARKER in s else PROBE_MARKER) + (
        f"\n\ndef _probe_{tag}_{k}():\n    import fastapi.param_functions\n    return fastapi.param_functions.Depends()\n")
    with open(p, "a", encoding="utf-8") as f:
        f.write(text)
    return s.count("\n") + text.count("\n")


def declaration() -> tuple[int, int]:
    for i, line in enumerate(open(os.path.join(PROJECT, TARGET_REL), encoding="utf-8"), 1):
        if line.startswith("def Depends("):
            return i, line.index("Depends") + 1
    raise RuntimeError("def Depends( not found")


# ---------------------------------------------------------------------------
# One server's run.

@dataclass
class Answer:
    t: float = 0.0
    took: float = 0.0
    total: int | None = None   # references, the declaration counted
    probes: set = field(default_factory=set)
    chars: int = 0
    note: str = ""


async def ask(session, peer: Peer, tool: str, args: dict, decl: int, t_ref: float) -> Answer:
    t1 = time.monotonic()
    a = Answer()
    try:
        with anyio.fail_after(CALL_TIMEOUT_S + 5):
            res = await session.call_tool(tool, args, read_timeout_seconds=CALL_TIMEOUT_S)
        text = "\n".join(getattr(c, "text", "") for c in res.content)
        a.chars = len(text)
        data = (res.structured_content or {}).get("data") if res.structured_content else None
        locs, total = peer.parse(text, data if data is not None else res.structured_content)
        declared = (TARGET_REL, decl) in locs if peer.lists_everything else True
        a.total = total + (0 if declared else 1)
        a.probes = {ln for r, ln in locs if r == EDIT_REL}
    except NotAnAnswer as e:
        a.note = str(e).replace("\n", " ")[:160]
    except Exception as e:  # a timeout or a transport error: recorded, the run goes on
        a.note = f"exception: {e!r}"[:200]
    t2 = time.monotonic()
    a.t, a.took = t2 - t_ref, t2 - t1
    return a


def includes(peer: Peer, a: Answer, line: int, expected: int) -> bool:
    # A server that pages its answer shows the new call through its total.
    return a.total == expected if not peer.lists_everything else (a.total == expected and line in a.probes)


async def run(peer: Peer, trials: int) -> dict:
    os.makedirs(OUT, exist_ok=True)
    marker = uuid.uuid4().hex[:12]
    decl, col = declaration()
    restore()
    peer.prepare()
    tool, args = peer.ref_call(decl, col)
    r: dict[str, Any] = {"peer": peer.name, "notes": peer.notes, "tool": tool, "args": args}
    params = StdioServerParameters(command=peer.command, args=peer.args,
                                   env=dict(os.environ, **peer.env, OUTSIDE_EDITS_RUN=marker), cwd=PROJECT)
    t0 = time.monotonic()
    try:
        with open(os.path.join(OUT, f"{peer.name}.stderr.log"), "w") as errlog:
            async with stdio_client(params, errlog=errlog) as (rd, wr):
                async with ClientSession(rd, wr) as s:
                    with anyio.fail_after(INIT_TIMEOUT_S):
                        init = await s.initialize()
                        tools = await s.list_tools()
                    r["server"] = f"{init.server_info.name} {init.server_info.version}"
                    r["tools"] = len(tools.tools)
                    r["tools_list_chars"] = len(tools.model_dump_json(by_alias=True, exclude_none=True))
                    for name, a in peer.setup_calls:
                        res = await s.call_tool(name, a, read_timeout_seconds=CALL_TIMEOUT_S)
                        if res.is_error:
                            raise RuntimeError(f"{name} failed")
                    cold = []
                    while True:
                        a = await ask(s, peer, tool, args, decl, t0)
                        cold.append(a)
                        log(f"{peer.name}: cold call {len(cold)} at {a.t:.1f} s: {a.total} {a.note[:80]}")
                        if a.total == EXPECTED_REFS:
                            break
                        if a.t > COLD_LIMIT_S:
                            raise RuntimeError("no complete answer within the cold limit")
                        await anyio.sleep(0.5)
                    r["cold_s"], r["cold_calls"] = round(cold[-1].t, 2), len(cold)
                    r["cold_first"] = {"total": cold[0].total, "note": cold[0].note[:80]}
                    r["answer_chars"] = cold[-1].chars
                    r["trials"] = []
                    for k in range(1, trials + 1):
                        await anyio.sleep(1.0)
                        line = append_probe(k, marker[:6])
                        expected = EXPECTED_REFS + k
                        tw = time.monotonic()
                        calls = []
                        while True:
                            a = await ask(s, peer, tool, args, decl, tw)
                            calls.append(a)
                            if includes(peer, a, line, expected) or a.t > EDIT_LIMIT_S:
                                break
                            await anyio.sleep(0.1)
                        seen = includes(peer, calls[-1], line, expected)
                        r["trials"].append({"latency_s": round(calls[-1].t, 2) if seen else None, "calls": len(calls),
                                            "first_included": includes(peer, calls[0], line, expected),
                                            "first_total": calls[0].total, "expected": expected})
                        log(f"{peer.name}: trial {k}: seen={seen} after {calls[-1].t:.2f} s, {len(calls)} call(s)")
                    restore()
                    tw = time.monotonic()
                    n = 0
                    while True:
                        a = await ask(s, peer, tool, args, decl, tw)
                        n += 1
                        if (a.total == EXPECTED_REFS and not a.probes) or a.t > EDIT_LIMIT_S:
                            break
                        await anyio.sleep(0.1)
                    r["restore_s"], r["restore_calls"] = round(a.t, 2), n
    except BaseException as e:
        if isinstance(e, KeyboardInterrupt):
            raise
        r["error"] = "".join(traceback.format_exception_only(type(e), e)).strip()[:500]
        log(f"{peer.name}: {r['error']}")
    finally:
        restore()
        await anyio.sleep(1.0)
        left = marked(marker)
        r["left_behind"] = len(left)
        kill(left)
    return r


def summary(results: list[dict]) -> str:
    out = ["", "summary (seconds):"]
    for r in results:
        tr = r.get("trials", [])
        lat = [t["latency_s"] for t in tr]
        firsts = sum(t["first_included"] for t in tr)
        out.append(
            f"  {r['peer']:16} tools {r.get('tools', '?'):>3} ({r.get('tools_list_chars', '?')} chars); "
            f"cold {r.get('cold_s', '?')} s in {r.get('cold_calls', '?')} call(s), first answer {r.get('cold_first', {}).get('total')}; "
            f"edit seen after {lat} s, first answer after the edit right {firsts}/{len(tr)}; "
            f"answer {r.get('answer_chars', '?')} chars; removal seen after {r.get('restore_s', '?')} s; "
            f"processes left behind {r.get('left_behind', '?')}" + (f"; ERROR {r['error']}" if "error" in r else ""))
    return "\n".join(out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--peers", default="tether,serena,agentlsp-direct,agentlsp-daemon")
    ap.add_argument("--trials", type=int, default=3)
    opts = ap.parse_args()
    known = peers()
    results = []
    for name in opts.peers.split(","):
        log(f"=== {name} ===")
        result = anyio.run(run, known[name], opts.trials)
        results.append(result)
        print("RESULT " + json.dumps(result), flush=True)
    print(summary(results), flush=True)
    with open(os.path.join(OUT, "results.json"), "w") as f:
        json.dump(results, f, indent=1)
    return 0 if all("error" not in r for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
