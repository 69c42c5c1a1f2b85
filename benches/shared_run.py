#!/usr/bin/env python3
"""One warm run for many agents: 8 MCP sessions on one `tether serve --http`
against 8 separate `tether serve` stdio processes, on a real project nobody
here wrote — the FastAPI 0.115.0 source distribution (benches/outside_edits.py
downloads and unpacks it into target/bench-peers/fastapi-src).

Each session connects, asks `lsp references` of
`fastapi.param_functions.Depends` (its `def` line; the correct answer counts
493 references in 152 files) and `lsp hover` of it, and keeps its
connection. Sessions start one after the other, as agents of one user
would. Measured per setup:

- each session's time from connecting to its first correct answer (the
  references; the shared run's first session pays pyright's cold start,
  the others find it warm);
- the memory of the whole process tree once all 8 sessions have answered:
  the summed RSS of every tether process and everything under it
  (language servers, kernels if any).

Targets: the shared run's memory ≤ 0.3× the separate processes'; sessions
2–8 answer in ≤ 0.05× the time of a cold process.

Run:  cargo build --release && python3 benches/shared_run.py [--sessions 8]
"""
from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time
from contextlib import AsyncExitStack

import anyio
import mcp.types as types
from mcp import StdioServerParameters
from mcp.client.client import Client
from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "benches", "support"))
from served import tree_rss_kib  # noqa: E402
PROJECT = os.path.join(REPO, "target", "bench-peers", "fastapi-src")
TETHER = os.path.join(REPO, "target", "release", "tether")
TOKEN = "shared-run-bench-token-0123456789"
EXPECTED = re.compile(r"^493 references? to `Depends` in 152 files")
ANSWER_WITHIN_S = 300.0


def depends_line() -> int:
    path = os.path.join(PROJECT, "fastapi", "param_functions.py")
    for i, line in enumerate(open(path, encoding="utf-8"), 1):
        if line.startswith("def Depends("):
            return i
    raise RuntimeError("def Depends( not found")


def text_of(result) -> str:
    return "\n".join(c.text for c in result.content if isinstance(c, types.TextContent))


def tether_pids(kind: str) -> list[int]:
    """tether processes serving the project: `--http` ones or stdio ones."""
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            argv = open(f"/proc/{entry}/cmdline", "rb").read().split(b"\0")
        except OSError:
            continue
        if argv and argv[0] == TETHER.encode() and b"serve" in argv and PROJECT.encode() in argv:
            if (b"--http" in argv) == (kind == "http"):
                out.append(int(entry))
    return out


async def ask(client: Client, line: int) -> float:
    """References until correct (bounded), then hover; when the correct
    references answer came (monotonic)."""
    deadline = time.monotonic() + ANSWER_WITHIN_S
    while True:
        r = await client.call_tool("lsp", {"action": "references", "file": "fastapi/param_functions.py", "line": line, "symbol": "Depends"})
        if EXPECTED.match(text_of(r)):
            answered = time.monotonic()
            break
        if time.monotonic() > deadline:
            raise RuntimeError(f"no correct answer within {ANSWER_WITHIN_S} s: {text_of(r)[:200]}")
        await anyio.sleep(0.2)
    r = await client.call_tool("lsp", {"action": "hover", "file": "fastapi/param_functions.py", "line": line, "symbol": "Depends"})
    if "Depends" not in text_of(r):
        raise RuntimeError(f"hover: {text_of(r)[:200]}")
    return answered


async def shared(n: int, line: int) -> tuple[list[float], int]:
    port = 48000 + os.getpid() % 1000
    url = f"http://127.0.0.1:{port}/mcp"
    env = dict(os.environ, TETHER_TOKEN=TOKEN)
    server = subprocess.Popen([TETHER, "serve", "--trusted", "--workdir", PROJECT, "--http", f"127.0.0.1:{port}"], env=env,
                              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        for line_out in server.stderr:
            if "MCP over HTTP at" in line_out:
                break
        times = []
        async with AsyncExitStack() as stack:
            for i in range(n):
                started = time.monotonic()
                http = create_mcp_http_client(headers={"Authorization": f"Bearer {TOKEN}"})
                client = await stack.enter_async_context(
                    Client(streamable_http_client(url, http_client=http), client_info=types.Implementation(name=f"agent-{i}", version="1")))
                times.append(await ask(client, line) - started)
            rss = tree_rss_kib(tether_pids("http"))
        return times, rss
    finally:
        server.terminate()
        server.wait(timeout=30)


async def separate(n: int, line: int) -> tuple[list[float], int]:
    times = []
    async with AsyncExitStack() as stack:
        for i in range(n):
            started = time.monotonic()
            params = StdioServerParameters(command=TETHER, args=["serve", "--trusted", "--workdir", PROJECT], env=dict(os.environ))
            client = await stack.enter_async_context(Client(params))
            times.append(await ask(client, line) - started)
        rss = tree_rss_kib(tether_pids("stdio"))
    return times, rss


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sessions", type=int, default=8)
    a = ap.parse_args()
    if not os.path.isdir(PROJECT):
        sys.exit("the FastAPI sources are missing: run `python3 benches/outside_edits.py --peers tether --trials 1` once (it downloads them)")
    if not os.path.exists(TETHER):
        sys.exit("build tether first: cargo build --release")
    line = depends_line()
    s_times, s_rss = anyio.run(shared, a.sessions, line)
    p_times, p_rss = anyio.run(separate, a.sessions, line)
    result = {
        "sessions": a.sessions,
        "shared": {"first_answer_s": [round(t, 3) for t in s_times], "tree_rss_mib": round(s_rss / 1024, 1)},
        "separate": {"first_answer_s": [round(t, 3) for t in p_times], "tree_rss_mib": round(p_rss / 1024, 1)},
    }
    cold = statistics.median(p_times)
    warm = s_times[1:]
    result["memory_ratio"] = round(s_rss / p_rss, 3)
    result["warm_to_cold_ratio_median"] = round(statistics.median(warm) / cold, 4) if warm else None
    result["warm_to_cold_ratio_max"] = round(max(warm) / cold, 4) if warm else None
    print("RESULT " + json.dumps(result))
    print(f"memory: shared {s_rss / 1024:.0f} MiB vs separate {p_rss / 1024:.0f} MiB: ratio {s_rss / p_rss:.3f} (target ≤ 0.3)")
    print(f"first answers: shared session 1 {s_times[0]:.2f} s, sessions 2–{a.sessions} median {statistics.median(warm):.3f} s "
          f"(max {max(warm):.3f} s); separate (each cold) median {cold:.2f} s; warm/cold {statistics.median(warm) / cold:.4f} "
          f"(max {max(warm) / cold:.4f}; target ≤ 0.05)")


if __name__ == "__main__":
    main()
