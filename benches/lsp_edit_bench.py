#!/usr/bin/env python3
"""The server's edits, side by side: "fix this error" (a missing import),
"organize imports" and "format this file" on a small TypeScript project —
tether's `lsp_edit` against agent-lsp 0.23.5 (PyPI, installed here into
target/bench-peers/agentlsp-venv), each through its MCP stdio server,
driven by one client (the official Python MCP SDK), both on the same
typescript-language-server.

Each server gets the calls a model makes with its tools, the fewest that
reach the goal, from a cold start (a fresh copy of the project, a fresh
server):

- tether: one call each — `lsp_edit apply` with `title: "Add import"`;
  `lsp_edit apply` with `kind: "source.organizeImports"`; `lsp_edit format`
  (the indentation from the project's `.editorconfig`).
- agent-lsp: `start_lsp`, then `suggest_fixes` at the name (asked again
  after `get_diagnostics`, up to twice, while the import fix is not among
  them), then `apply_edit` with the fix's text; for imports, `suggest_fixes`
  at the import line and, when no organize action is offered, `apply_edit`
  of the sorted line written by hand; `format_document` (`tab_size` 2)
  and `apply_edit` of its edits as a WorkspaceEdit.

For each: calls, characters of every answer (what the model reads),
seconds, and whether the file is right afterwards.

    cargo build --release && python3 benches/lsp_edit_bench.py [--trials 3]

Prints one `RESULT {json}` line per server and task (medians over the
trials), then a table.
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
import tempfile
import time

import anyio
import mcp.types as types
from mcp import StdioServerParameters
from mcp.client.client import Client

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PEERS = os.path.join(REPO, "target", "bench-peers")
AGENTLSP_VENV = os.path.join(PEERS, "agentlsp-venv")
AGENTLSP = os.path.join(AGENTLSP_VENV, "bin", "agent-lsp")
TETHER = os.path.join(REPO, "target", "release", "tether")
CALL_BOUND_S = 120

TSCONFIG = '{"compilerOptions": {"strict": true, "target": "es2020", "module": "commonjs"}, "include": ["src/**/*.ts"]}\n'
UTIL = ("export function plusOne(n: number): number {\n  return n + 1;\n}\n\n"
        "export function twice(n: number): number {\n  return 2 * n;\n}\n\n"
        "export const thrice = (n: number): number => 3 * n;\n")
EDITORCONFIG = "root = true\n[*.ts]\nindent_style = space\nindent_size = 2\n"

# Each task: the file's content before, and whether the content after is right.
TASKS = {
    "fix": ("export const two = plusOne(1);\n",
            lambda t: re.match(r"import \{ plusOne \} from ['\"]\./util['\"];\n\nexport const two = plusOne\(1\);\n$", t)
            is not None),
    "organize": ("import { twice, thrice, plusOne } from './util';\n\nexport const six = plusOne(2) + twice(1) + thrice(1);\n",
                 lambda t: t.startswith("import { plusOne, thrice, twice } from './util';\n")),
    "format": ("export function f(a:number,b:number){\nif(a>b){\nreturn a}\n    return b;\n}\n",
               lambda t: t == "export function f(a: number, b: number) {\n  if (a > b) {\n    return a\n  }\n  return b;\n}\n"),
}
SORTED_BY_HAND = "import { plusOne, thrice, twice } from './util';\n"


def set_up():
    if not os.path.exists(AGENTLSP):
        os.makedirs(PEERS, exist_ok=True)
        subprocess.run([sys.executable, "-m", "venv", AGENTLSP_VENV], check=True)
        subprocess.run([os.path.join(AGENTLSP_VENV, "bin", "pip"), "install", "--quiet",
                        "--disable-pip-version-check", "agent-lsp==0.23.5"], check=True)
    if not os.path.exists(TETHER):
        subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=REPO, check=True)
    if shutil.which("typescript-language-server") is None:
        sys.exit("typescript-language-server is not on PATH: npm install -g typescript-language-server typescript@5")


def project(task: str) -> str:
    root = os.path.realpath(tempfile.mkdtemp(prefix=f"lsp-edit-{task}-"))
    os.makedirs(os.path.join(root, "src"))
    for rel, text in [("tsconfig.json", TSCONFIG), (".editorconfig", EDITORCONFIG), ("src/util.ts", UTIL),
                      ("src/main.ts", TASKS[task][0])]:
        with open(os.path.join(root, rel), "w") as f:
            f.write(text)
    return root


def text_of(result) -> str:
    return "\n".join(c.text for c in result.content if isinstance(c, types.TextContent))


def gcf_rows(text: str) -> list[list]:
    """The rows of the first GCF table in `text` (`## [N]{fields}` then N
    `|`-separated rows; strings JSON-quoted)."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        m = re.match(r"## \[(\d+)\]\{", line)
        if m:
            rows = []
            for row in lines[i + 1:i + 1 + int(m.group(1))]:
                cells = re.findall(r'"(?:[^"\\]|\\.)*"|[^|]+', row.strip())
                rows.append([json.loads(c) if c.startswith('"') else int(c) for c in cells])
            return rows
    return []


async def tether_steps(call, root: str, task: str):
    main = "src/main.ts"
    if task == "fix":
        await call("lsp_edit", {"action": "apply", "file": main, "line": 1, "symbol": "plusOne", "title": "Add import"})
    elif task == "organize":
        await call("lsp_edit", {"action": "apply", "file": main, "line": 1, "kind": "source.organizeImports"})
    else:
        await call("lsp_edit", {"action": "format", "file": main})


async def agentlsp_steps(call, root: str, task: str):
    main = os.path.join(root, "src", "main.ts")
    await call("start_lsp", {"root_dir": root})
    if task == "fix":
        where = {"file_path": main, "start_line": 1, "start_column": 20, "end_line": 1, "end_column": 27}
        fixes = await call("suggest_fixes", where)
        for _ in range(2):
            if "Add import from" in fixes:
                break
            await call("get_diagnostics", {"file_path": main})
            fixes = await call("suggest_fixes", where)
        m = re.search(r'"(import \{ plusOne \} from \\"\./util\\";\\n\\n)"', fixes)
        if m:
            line = json.loads(f'"{m.group(1)}"')
            await call("apply_edit", {"file_path": main, "old_text": "export const two",
                                      "new_text": line + "export const two"})
    elif task == "organize":
        offered = await call("suggest_fixes", {"file_path": main, "start_line": 1, "start_column": 1,
                                               "end_line": 1, "end_column": 2})
        if "organizeImports" not in offered:
            # None offered: the model sorts the line itself.
            with open(main) as f:
                first = f.readline()
            await call("apply_edit", {"file_path": main, "old_text": first, "new_text": SORTED_BY_HAND})
    else:
        edits = gcf_rows(await call("format_document", {"file_path": main, "tab_size": 2, "insert_spaces": True}))
        text_edits = [{"newText": e[0], "range": {"start": {"line": e[4], "character": e[3]},
                                                  "end": {"line": e[2], "character": e[1]}}} for e in edits]
        await call("apply_edit", {"workspace_edit": {"changes": {f"file://{main}": text_edits}}})


PEERS_RUN = {
    "tether": (lambda root: StdioServerParameters(command=TETHER, args=["serve", "--trusted", "--workdir", root]), tether_steps),
    "agent-lsp": (lambda root: StdioServerParameters(
        command=AGENTLSP, args=["typescript:typescript-language-server,--stdio"],
        env={**os.environ, "HOME": os.path.join(PEERS, "agentlsp-home-edit")}), agentlsp_steps),
}


async def one(peer: str, task: str) -> dict:
    root = project(task)
    params, steps = PEERS_RUN[peer]
    answers: list[str] = []
    try:
        async with Client(params(root)) as c:
            async def call(tool, args):
                with anyio.fail_after(CALL_BOUND_S):
                    r = await c.call_tool(tool, args)
                answers.append(text_of(r))
                return answers[-1]
            started = time.monotonic()
            await steps(call, root, task)
            seconds = time.monotonic() - started
        with open(os.path.join(root, "src", "main.ts")) as f:
            right = TASKS[task][1](f.read())
        return {"calls": len(answers), "chars": sum(len(a) for a in answers), "seconds": seconds, "right": right}
    finally:
        shutil.rmtree(root, ignore_errors=True)


async def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--trials", type=int, default=3)
    args = ap.parse_args()
    set_up()
    rows = []
    for task in TASKS:
        for peer in PEERS_RUN:
            runs = [await one(peer, task) for _ in range(args.trials)]
            result = {"peer": peer, "task": task, "trials": args.trials,
                      "calls": statistics.median(r["calls"] for r in runs),
                      "chars": statistics.median(r["chars"] for r in runs),
                      "seconds": statistics.median(r["seconds"] for r in runs),
                      "right": sum(r["right"] for r in runs)}
            print("RESULT", json.dumps(result), flush=True)
            rows.append(result)
    print("\n| task | server | calls | characters read | seconds (median) | file right |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['task']} | {r['peer']} | {r['calls']:g} | {r['chars']:,.0f} | {r['seconds']:.2f} | "
              f"{r['right']}/{r['trials']} |")


if __name__ == "__main__":
    anyio.run(main)
