"""What the Python benchmarks share about a served run: starting
`tether serve --http` on a loopback port and waiting until it listens, and
the memory of a process tree."""

from __future__ import annotations

import os
import subprocess
import threading


def serve_http(tether: str, workdir: str, token: str, port: int) -> subprocess.Popen:
    """`tether serve --workdir WORKDIR --http 127.0.0.1:PORT`, once it says
    it listens; its stderr keeps being drained."""
    server = subprocess.Popen([tether, "serve", "--trusted", "--workdir", workdir, "--http", f"127.0.0.1:{port}"],
                              env=dict(os.environ, TETHER_TOKEN=token), stdin=subprocess.DEVNULL,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    for line in server.stderr:
        if "MCP over HTTP" in line:
            break
    else:
        raise RuntimeError(f"tether serve --http ended before it listened (status {server.wait()})")
    threading.Thread(target=lambda: [None for _ in server.stderr], daemon=True).start()
    return server


def tree_rss_kib(roots: list[int]) -> int:
    """Summed VmRSS of `roots` and every descendant."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = open(f"/proc/{entry}/stat").read()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(int(entry))
    total, seen, todo = 0, set(), list(roots)
    while todo:
        pid = todo.pop()
        if pid in seen:
            continue
        seen.add(pid)
        try:
            for line in open(f"/proc/{pid}/status"):
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        except OSError:
            pass
        todo.extend(children.get(pid, []))
    return total
