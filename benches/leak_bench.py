#!/usr/bin/env python3
"""A run that stays small for days: 1,000 MCP sessions of one `tether
serve --http` run opened and closed (each with an `eval` kernel, a debug
session stopped at a breakpoint and `lsp` calls on the run's pyright),
then 1,000 `tether serve` stdio runs started and ended (each with a kernel
and calls), four at a time. What is left: processes the run started for
the sessions, processes of the ended stdio runs, and the run's open file
descriptors and resident memory against what it had after a warm-up.

    cargo build --release
    python3 benches/leak_bench.py                      # 1,000 of each
    python3 benches/leak_bench.py --sessions 200 --stdio 200

The engine is tests/mcp/come_and_go.py, which the test command runs with
50 of each (`hosts::http::fifty_sessions_and_fifty_stdio_runs_…`).
Prints the engine's figures and one `leak bench:` line; exits 1 when
anything is left or either figure is more than 10 % above its start.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "benches", "support"))
from served import serve_http  # noqa: E402

TOKEN = "leak-bench-token-0123456789abcdef"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sessions", type=int, default=1000)
    ap.add_argument("--stdio", type=int, default=1000)
    ap.add_argument("--parallel", type=int, default=4)
    ap.add_argument("--tether", default=os.path.join(REPO, "target", "release", "tether"))
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="tether-leak-")
    for rel, text in [("requirements.txt", ""), ("shapes.py", "def area(w, h):\n    return w * h\n"),
                      ("app.py", "from shapes import area\n\nprint(area(2, 3))\n")]:
        with open(os.path.join(work, rel), "w") as f:
            f.write(text)
    port = 51000 + os.getpid() % 1000
    server = serve_http(args.tether, work, TOKEN, port)
    try:
        out = subprocess.run(
            [sys.executable, os.path.join(REPO, "tests", "mcp", "come_and_go.py"), f"http://127.0.0.1:{port}/mcp",
             TOKEN, args.tether, work, str(server.pid), str(args.sessions), str(args.stdio), str(args.parallel)],
            capture_output=True, text=True)
    finally:
        server.terminate()
        server.wait(timeout=30)
    if out.returncode != 0:
        print(out.stdout, out.stderr, file=sys.stderr)
        return 1
    figures = json.loads(out.stdout.strip().splitlines()[-1])
    print(json.dumps(figures))
    before, after = figures["before"], figures["after"]
    left = len(figures["processes_left"]) + len(figures["stdio_processes_left"])
    grew = [k for k in ("fds", "rss_kib") if after[k] * 10 > before[k] * 11]
    print(f"leak bench: {figures['sessions']} HTTP sessions ({figures['sessions_s']} s) and "
          f"{figures['stdio_runs']} stdio runs ({figures['stdio_s']} s), {args.parallel} at a time; processes left "
          f"{len(figures['processes_left'])} + {len(figures['stdio_processes_left'])}; file descriptors "
          f"{before['fds']} -> {after['fds']}; resident memory {figures['cold']['rss_kib'] / 1024:.1f} MiB cold, "
          f"{before['rss_kib'] / 1024:.1f} MiB after the warm-up, {after['rss_kib'] / 1024:.1f} MiB after")
    return 1 if left or grew else 0


if __name__ == "__main__":
    sys.exit(main())
