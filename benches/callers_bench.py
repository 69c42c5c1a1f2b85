#!/usr/bin/env python3
""""Who calls X, and show me the first caller's body": tether against
Serena and agent-lsp on FastAPI 0.115.0, side by side in one run, each
through its MCP stdio server, driven by one client (the official Python
MCP SDK), all on the same pyright.

X is `fastapi.dependencies.utils.get_dependant`; the first caller is the
first in its own file, `get_sub_dependant`. The callers expected are found
by the text (every `get_dependant(` outside its definition, and the
function around it, read with Python's `ast`): `get_sub_dependant`,
`solve_dependencies`, `APIRoute.__init__`, `APIWebSocketRoute.__init__`.
Each server gets the calls a model makes with its tools, the fewest that
reach the goal:

- tether, two calls: `lsp call_hierarchy`, then `lsp definition` with
  `body: true` at the caller it lists first. And one call:
  `call_hierarchy` with `body: true` (the first five callers' bodies).
- Serena: `find_referencing_symbols`, then `find_symbol` with
  `include_body` for the caller.
- agent-lsp: `callers` (it names callers without their file or line),
  then `go_to_symbol` for the caller's place, then `get_symbol_source`.

For each: the tool list (tools, characters of their JSON as the SDK reads
it), then the sequence cold once and warm three times: calls, characters
of every answer, seconds (median of the warm runs), and whether the
answers name every caller where it is and hold the caller's whole body.

Set-up is benches/outside_edits.py's: peers in target/bench-peers, the
release build of tether.

Run:  python3 benches/callers_bench.py [--peers tether,tether-one-call,serena,agentlsp] [--warm 3]
Prints one `RESULT {json}` line per server, then a table.
"""
from __future__ import annotations

import argparse
import ast
import json
import os
import statistics
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
CLIENT_VENV = os.path.join(os.path.dirname(HERE), "target", "bench-peers", "client-venv")

if __name__ == "__main__" and os.path.realpath(sys.prefix) != os.path.realpath(CLIENT_VENV):
    # outside_edits.py installs everything before it reads its arguments;
    # `--help` then only prints them.
    import subprocess
    subprocess.run([sys.executable, os.path.join(HERE, "outside_edits.py"), "--help"], check=True,
                   stdout=subprocess.DEVNULL)
    os.execv(os.path.join(CLIENT_VENV, "bin", "python"), [os.path.join(CLIENT_VENV, "bin", "python"), *sys.argv])

sys.path.insert(0, HERE)
import outside_edits as oe  # noqa: E402  (peers' configuration)

import anyio  # noqa: E402
from mcp import ClientSession, StdioServerParameters, stdio_client  # noqa: E402

TARGET = "fastapi/dependencies/utils.py"
X = "get_dependant"
FIRST = "get_sub_dependant"
CALL_TIMEOUT_S = 300


def source(rel: str) -> str:
    with open(os.path.join(oe.PROJECT, rel), encoding="utf-8") as f:
        return f.read()


def functions(rel: str):
    """(qualified name, first line, last line) of every function in `rel`."""
    out = []

    def walk(node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                out.append((prefix + child.name, child.lineno, child.end_lineno))
                walk(child, prefix + child.name + ".")
            elif isinstance(child, ast.ClassDef):
                walk(child, prefix + child.name + ".")

    walk(ast.parse(source(rel)), "")
    return out


def expected_callers() -> set[tuple[str, str]]:
    """(file, qualified function) around every `X(` outside its definition."""
    found = set()
    for rel in ("fastapi/dependencies/utils.py", "fastapi/routing.py"):
        fns = functions(rel)
        for k, line in enumerate(source(rel).splitlines(), 1):
            if f"{X}(" in line and not line.lstrip().startswith("def "):
                inner = [f for f in fns if f[1] <= k <= f[2]]
                if inner:
                    found.add((rel, max(inner, key=lambda f: f[1])[0]))
    return found


def def_line(rel: str, name: str) -> int:
    return next(f[1] for f in functions(rel) if f[0] == name)


def body_lines(rel: str, name: str) -> list[str]:
    f = next(f for f in functions(rel) if f[0] == name)
    return source(rel).splitlines()[f[1] - 1:f[2]]


def text_of(result) -> str:
    return "".join(getattr(c, "text", "") for c in result.content)


# ---------------------------------------------------------------------------
# Each server's sequence: a list of steps, each `(tool, args)` or a function
# of the answers so far giving one.

def tether_two():
    line = def_line(TARGET, X)
    return [
        ("lsp", {"action": "call_hierarchy", "file": TARGET, "line": line, "symbol": X}),
        # The caller it lists first, at its own line.
        lambda answers: ("lsp", {"action": "definition", "file": answers[0]["data"]["items"][0]["path"],
                                 "line": answers[0]["data"]["items"][0]["line"],
                                 "symbol": answers[0]["data"]["items"][0]["name"], "body": True}),
    ]


def tether_one():
    return [("lsp", {"action": "call_hierarchy", "file": TARGET, "line": def_line(TARGET, X), "symbol": X,
                     "body": True})]


def serena():
    return [
        ("find_referencing_symbols", {"name_path": X, "relative_path": TARGET}),
        ("find_symbol", {"name_path_pattern": FIRST, "relative_path": TARGET, "include_body": True}),
    ]


def agentlsp():
    path = os.path.join(oe.PROJECT, TARGET)
    return [
        ("callers", {"file_path": path, "line": def_line(TARGET, X), "column": 5, "direction": "incoming"}),
        ("go_to_symbol", {"symbol_path": FIRST}),
        ("get_symbol_source", {"file_path": path, "line": def_line(TARGET, FIRST), "column": 5}),
    ]


SERVERS = {
    "tether": ("tether", tether_two),
    "tether-one-call": ("tether", tether_one),
    "serena": ("serena", serena),
    "agentlsp": ("agentlsp-direct", agentlsp),
}


def names_every_caller(name: str, first_answer: str) -> str:
    """Whether the first answer names each expected caller where it is."""
    expected = expected_callers()
    missing = []
    for rel, fn in sorted(expected):
        short = fn.split(".")[-1]
        line = def_line(rel, fn)
        if name.startswith("tether"):
            ok = f"{short} (" in first_answer and f" {line}:" in first_answer and rel in first_answer
        elif name == "serena":
            # Serena names the assignment or the function the call is in.
            owner = fn.split(".")[0]
            ok = owner in first_answer and rel in first_answer
        else:
            ok = short in first_answer and line_mentioned(first_answer, line)
        if not ok:
            missing.append(fn)
    return "all" if not missing else f"missing where: {', '.join(missing)}"


def line_mentioned(text: str, line: int) -> bool:
    return str(line) in text


async def run(name: str, warm: int, tool_lists: dict) -> dict:
    peer_name, steps_of = SERVERS[name]
    peer = oe.peers()[peer_name]
    peer.prepare()
    params = StdioServerParameters(command=peer.command, args=peer.args, env={**os.environ, **peer.env})
    runs = []
    async with stdio_client(params) as (r, w):
        async with ClientSession(r, w) as s:
            await s.initialize()
            tools = (await s.list_tools()).tools
            tool_lists[peer_name] = (len(tools), sum(len(json.dumps(t.model_dump(mode="json", exclude_none=True)))
                                                    for t in tools))
            for _ in range(1 + warm):
                answers, t0 = [], time.monotonic()
                for step in steps_of():
                    tool, args = step(answers) if callable(step) else step
                    with anyio.fail_after(CALL_TIMEOUT_S):
                        result = await s.call_tool(tool, args)
                    structured = result.structured_content or {}
                    answers.append({"text": text_of(result), "data": structured.get("data", structured),
                                    "error": result.is_error})
                runs.append((time.monotonic() - t0, answers))
    cold_s, answers = runs[0]
    warm_s = [t for t, _ in runs[1:]]
    chars = sum(len(a["text"]) for a in answers)
    body = body_lines(TARGET, FIRST)
    last = answers[-1]["text"]
    # The whole body: its first and last lines, as they are in the file.
    holds_body = all(b.strip() in last.replace("\\n", "\n").replace('\\"', '"') for b in (body[0], body[-1]))
    return {
        "server": name,
        "calls": len(answers),
        "characters": chars,
        "answer_characters": [len(a["text"]) for a in answers],
        "cold_s": round(cold_s, 2),
        "warm_median_s": round(statistics.median(warm_s), 3) if warm_s else None,
        "warm_s": [round(t, 3) for t in warm_s],
        "callers_named": names_every_caller(name, answers[0]["text"]),
        "holds_first_callers_body": holds_body,
        "errors": [a["text"][:200] for a in answers if a["error"]],
    }


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--peers", default="tether,tether-one-call,serena,agentlsp")
    ap.add_argument("--warm", type=int, default=3)
    args = ap.parse_args()
    print(f"expected callers of {X}: {sorted(expected_callers())}", file=sys.stderr)
    results, tool_lists = [], {}
    for name in args.peers.split(","):
        oe.log(f"{name}: starting")
        try:
            res = anyio.run(run, name, args.warm, tool_lists)
        except Exception as e:  # a peer that fails is reported, the run goes on
            while isinstance(e, BaseExceptionGroup) and len(e.exceptions) == 1:
                e = e.exceptions[0]
            traceback.print_exception(e, file=sys.stderr)
            res = {"server": name, "failed": f"{type(e).__name__}: {e}"}
        print("RESULT " + json.dumps(res), flush=True)
        results.append(res)
    print("\n| server | tools (characters) | calls | characters answered | cold s | warm median s | every caller named where it is | first caller's whole body |")
    print("|---|---|---|---|---|---|---|---|")
    for r in results:
        peer = SERVERS[r["server"]][0]
        n, c = tool_lists.get(peer, (0, 0))
        if "failed" in r:
            print(f"| {r['server']} | {n} ({c:,}) | failed: {r['failed']} |")
            continue
        print(f"| {r['server']} | {n} ({c:,}) | {r['calls']} | {r['characters']:,} | {r['cold_s']} | {r['warm_median_s']} "
              f"| {r['callers_named']} | {'yes' if r['holds_first_callers_body'] else 'no'} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
