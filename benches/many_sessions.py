#!/usr/bin/env python3
"""64 MCP sessions on one `tether serve --http` run, each doing warm
`lsp hover` and `ast_grep` calls, all at once: how many fail, the p50/p99
latency, and the memory of the whole process tree; and whether each
session's kernel stays its own under that load (each sets a value in an
`eval` cell and reads it back after the others have set theirs).

    cargo build --release && python3 benches/many_sessions.py [--sessions 64] [--rounds 20]

The project is tests/fixtures/lsp/python, copied to a temporary folder.
Needs the MCP Python SDK (`pip install mcp==2.3.0`) and pyright.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import AsyncExitStack

import anyio
import mcp.types as types
from mcp.client.client import Client
from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "benches", "support"))
from served import serve_http, tree_rss_kib  # noqa: E402
TOKEN = "many-sessions-bench-token-0123456789"
HOVER = {"action": "hover", "file": "app.py", "line": 5, "symbol": "area"}
SEARCH = {"pattern": "print($A)", "language": "python"}


def text_of(result) -> str:
    return "\n".join(c.text for c in result.content if isinstance(c, types.TextContent))


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tether", default=os.path.join(REPO, "target", "release", "tether"))
    ap.add_argument("--sessions", type=int, default=64)
    ap.add_argument("--rounds", type=int, default=20)
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="tether-many-")
    project = os.path.join(work, "project")
    shutil.copytree(os.path.join(REPO, "tests", "fixtures", "lsp", "python"), project)
    port = 49000 + os.getpid() % 1000
    server = serve_http(args.tether, project, TOKEN, port)
    url = f"http://127.0.0.1:{port}/mcp"
    latencies: dict[str, list[float]] = {"hover": [], "ast_grep": []}
    failures: list[str] = []
    own_kernel = [0]
    try:
        async with AsyncExitStack() as stack:
            clients = []
            for i in range(args.sessions):
                http = create_mcp_http_client(headers={"Authorization": f"Bearer {TOKEN}"})
                info = types.Implementation(name=f"agent-{i}", version="1")
                clients.append(await stack.enter_async_context(
                    Client(streamable_http_client(url, http_client=http), client_info=info)))
            # Warm: pyright loaded, the grammar compiled.
            deadline = time.monotonic() + 60
            while "area" not in text_of(await clients[0].call_tool("lsp", HOVER)):
                if time.monotonic() > deadline:
                    raise RuntimeError("pyright never answered the hover")
            await clients[0].call_tool("ast_grep", SEARCH)

            async def cell(i, c, code):
                r = await c.call_tool("eval", {"code": code, "description": "bench: this session's own kernel"})
                return text_of(r)

            async def set_value(i, c):
                await cell(i, c, f"mine = {i}")

            async with anyio.create_task_group() as tg:
                for i, c in enumerate(clients):
                    tg.start_soon(set_value, i, c)
            started = time.monotonic()

            async def agent(i, c):
                for k in range(args.rounds):
                    tool, call_args = ("lsp", HOVER) if k % 2 == 0 else ("ast_grep", SEARCH)
                    t = time.monotonic()
                    try:
                        r = await c.call_tool(tool, call_args)
                        ok = not r.is_error and ("area" in text_of(r) if tool == "lsp" else "print(" in text_of(r))
                        if not ok:
                            failures.append(f"{tool} in session {i}: {text_of(r)[:200]}")
                    except Exception as e:  # transport failures count as failures
                        failures.append(f"{tool} in session {i}: {type(e).__name__}: {e}")
                    latencies["hover" if tool == "lsp" else "ast_grep"].append((time.monotonic() - t) * 1000)
                out = await cell(i, c, "mine")
                if out.strip().endswith(str(i)) or f"Out: {i}" in out:
                    own_kernel[0] += 1
                else:
                    failures.append(f"session {i} read another kernel's value: {out[:200]}")

            async with anyio.create_task_group() as tg:
                for i, c in enumerate(clients):
                    tg.start_soon(agent, i, c)
            wall = time.monotonic() - started
            rss = tree_rss_kib([server.pid])
    finally:
        server.terminate()
        server.wait()
        shutil.rmtree(work, ignore_errors=True)
    calls = sum(len(v) for v in latencies.values())

    def q(v, p):
        v = sorted(v)
        return v[min(len(v) - 1, round((len(v) - 1) * p))]

    print(f"many sessions: {args.sessions} sessions x {args.rounds} calls = {calls} calls in {wall:.1f} s "
          f"({calls / wall:.0f} calls/s); failures {len(failures)}; "
          f"hover p50 {statistics.median(latencies['hover']):.1f} ms p99 {q(latencies['hover'], 0.99):.1f} ms; "
          f"ast_grep p50 {statistics.median(latencies['ast_grep']):.1f} ms p99 {q(latencies['ast_grep'], 0.99):.1f} ms; "
          f"own kernel {own_kernel[0]}/{args.sessions}; RSS of the run (tether, pyright, {args.sessions} kernels) "
          f"{rss / 1024:.0f} MiB")
    for f in failures[:10]:
        print("  failure:", f)
    sys.exit(1 if failures else 0)


anyio.run(main)
