"""Sessions and runs that come and go, and what they leave behind: the
engine of `tests/it/hosts/http.rs`'s leak test and of
`benches/leak_bench.py`, through the official MCP Python SDK.

    python3 come_and_go.py URL TOKEN TETHER WORKDIR SERVER_PID SESSIONS STDIO PARALLEL

Against the `tether serve --http` run at URL (process SERVER_PID), after a
warm-up of a tenth as many (at most 100): SESSIONS MCP sessions opened and
closed, PARALLEL at a time, each with an `eval` kernel, a debug session stopped at a breakpoint (left for
the session's end to clean up) and `lsp` calls on the run's shared
pyright; then STDIO `tether serve` stdio runs started and ended, each with
a kernel and a call. Prints one JSON line of figures: the run's open file
descriptors and resident memory before and after, the processes the run
had started that are left (beyond those it had after the warm-up: the
shared language server), and the processes left of the stdio runs.
"""

import json
import os
import sys
import time

import anyio
import mcp.types as types
from mcp import StdioServerParameters
from mcp.client.client import Client
from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client

URL, TOKEN, TETHER, WORKDIR = sys.argv[1:5]
SERVER_PID, SESSIONS, STDIO, PARALLEL = (int(a) for a in sys.argv[5:9])
# How long the run may take to end what a closed session held.
SETTLE_S = 30


def text_of(result):
    return "\n".join(c.text for c in result.content if isinstance(c, types.TextContent))


def fds(pid):
    return len(os.listdir(f"/proc/{pid}/fd"))


def fd_kinds(pid):
    """How many open descriptors of each kind (`socket`, `pipe`, `anon_inode:[eventfd]`, a path)."""
    kinds = {}
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        kind = target.split(":[")[0] if ":[" in target else target
        kinds[kind] = kinds.get(kind, 0) + 1
    return kinds


def rss_kib(pid):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def descendants(pid):
    """(pid, start time, command) of every live descendant of `pid`."""
    children, info = {}, {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = open(f"/proc/{entry}/stat").read()
            cmd = open(f"/proc/{entry}/cmdline", "rb").read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if fields[0] in ("Z", "X"):
            continue
        children.setdefault(int(fields[1]), []).append(int(entry))
        info[int(entry)] = (int(fields[19]), cmd.strip()[:120])
    out, todo = set(), [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            out.add((child, *info[child]))
            todo.append(child)
    return out


def of_runs(ids):
    """Live processes whose environment names one of the runs `ids`."""
    marks = [f"TETHER_RUN={i}\0".encode() for i in ids]
    left = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            env = open(f"/proc/{entry}/environ", "rb").read()
        except OSError:
            continue
        if any(m in env for m in marks):
            left.append(int(entry))
    return left


def check(cond, what, detail=""):
    if not cond:
        raise AssertionError(f"{what}\n--- detail ---\n{detail}")


async def one_session(n):
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {TOKEN}"})
    info = types.Implementation(name=f"comer-{n}", version="1")
    async with Client(streamable_http_client(URL, http_client=http), client_info=info) as c:
        r = await c.call_tool("eval", {"code": f"x = {n}\nx * 2", "description": "a cell in this session's kernel"})
        check(not r.is_error and f"Out: {n * 2}" in text_of(r), f"session {n}: its kernel answers", text_of(r))
        r = await c.call_tool("debug", {"op": "launch", "program": "app.py", "file": "shapes.py", "lines": [2]})
        check("stopped (breakpoint) at shapes.py:2" in text_of(r), f"session {n}: it stops at its breakpoint", text_of(r))
        r = await c.call_tool("lsp", {"action": "definition", "file": "app.py", "line": 3, "symbol": "area"})
        check(not r.is_error and "shapes.py:1:5" in text_of(r), f"session {n}: pyright answers", text_of(r))
    # Leaving sends DELETE: the session ends, its kernel and debug session with it.


async def one_stdio_run(n, ids):
    params = StdioServerParameters(command=TETHER, args=["serve", "--trusted", "--workdir", WORKDIR])
    async with Client(params) as c:
        r = await c.call_tool("eval", {"code": f"{n} + 1", "description": "a cell in this run's kernel"})
        check(not r.is_error and f"Out: {n + 1}" in text_of(r), f"stdio run {n}: its kernel answers", text_of(r))
        r = await c.call_tool("ast_grep", {"pattern": "area($W, $H)", "language": "python"})
        check(not r.is_error, f"stdio run {n}: a search answers", text_of(r))
        r = await c.call_tool("lsp", {"action": "status"})
        check(not r.is_error, f"stdio run {n}: lsp status answers", text_of(r))
        r = await c.call_tool("eval", {"code": "import os\nos.environ['TETHER_RUN']", "description": "the run's id"})
        ids.append(text_of(r).split("Out: ")[-1].strip().strip("'"))


async def in_batches(count, work):
    done = 0
    while done < count:
        batch = min(PARALLEL, count - done)
        async with anyio.create_task_group() as tg:
            for k in range(batch):
                tg.start_soon(work, done + k)
        done += batch


async def settled(condition):
    deadline = time.monotonic() + SETTLE_S
    while not condition() and time.monotonic() < deadline:
        await anyio.sleep(0.5)


async def main():
    started = time.monotonic()
    cold = {"fds": fds(SERVER_PID), "rss_kib": rss_kib(SERVER_PID)}
    # Warm-up, a tenth of the sessions (at most 100): pyright, the debug
    # adapter's first start, the run's thread pools and caches at the
    # size they keep.
    await in_batches(min(max(PARALLEL, SESSIONS // 10), 100), one_session)
    await anyio.sleep(2)
    before = {"fds": fds(SERVER_PID), "rss_kib": rss_kib(SERVER_PID), "fd_kinds": fd_kinds(SERVER_PID)}
    kept = descendants(SERVER_PID)
    await in_batches(SESSIONS, one_session)
    sessions_s = time.monotonic() - started
    await settled(lambda: not (descendants(SERVER_PID) - kept))
    # Connections the clients closed are closed by the run a moment later.
    await settled(lambda: fds(SERVER_PID) * 10 <= before["fds"] * 11)
    await anyio.sleep(2)
    left = sorted(descendants(SERVER_PID) - kept)
    after = {"fds": fds(SERVER_PID), "rss_kib": rss_kib(SERVER_PID), "fd_kinds": fd_kinds(SERVER_PID)}
    stdio_ids = []
    t = time.monotonic()

    async def stdio(n):
        await one_stdio_run(n, stdio_ids)

    await in_batches(STDIO, stdio)
    stdio_s = time.monotonic() - t
    await settled(lambda: not of_runs(stdio_ids))
    stdio_left = of_runs(stdio_ids)
    print(json.dumps({
        "sessions": SESSIONS, "stdio_runs": len(stdio_ids), "parallel": PARALLEL,
        "cold": cold, "before": before, "after": after,
        "processes_left": [f"{p} {cmd}" for p, _, cmd in left],
        "stdio_processes_left": stdio_left,
        "sessions_s": round(sessions_s, 1), "stdio_s": round(stdio_s, 1),
    }), flush=True)


anyio.run(main)
