#!/usr/bin/env python3
"""Edits by symbol, side by side: "replace this function's body" and "add
a method after this one" on FastAPI 0.115.0 — tether's `lsp_edit` against
Serena 2.1.0 (`replace_symbol_body`, `insert_after_symbol`), each through
its MCP stdio server, driven by one client (the official Python MCP SDK),
both on the same pyright.

The tasks, each checked on the whole file afterwards, byte for byte:

- body: `FastAPI.on_event` in fastapi/applications.py — a method under a
  multi-line `@deprecated(...)` decorator, with a multi-line signature and
  a docstring — gets the body `handler = self.router.on_event(event_type)`
  / `return handler` in place of `return self.router.on_event(event_type)`.
  tether: one call, `replace` with `body_only` and the two statements.
  Serena's "body" is the whole symbol: the model reads it
  (`find_symbol` with `include_body`) and sends it back changed.
- method: `SecurityScopes.__len__` added after `SecurityScopes.__init__`
  in fastapi/security/oauth2.py, the same text (indented as a member) to
  both: tether `insert_after`, Serena `insert_after_symbol`.
- method, text at column 0: the same, the text given unindented, as
  models often write it.
- body of a CRLF file: fastapi/utils.py with CRLF line endings (a Windows
  checkout), `generate_unique_id`'s body made `return route.name`: tether
  one call; Serena reads the symbol and sends back its first line and the
  new body, in the line endings it read.

Each server: one session; a warm-up call (not counted) so its pyright has
loaded the project; then each task, the edited file restored after it,
`--trials` times. Reported: calls, characters sent and answered, seconds
(median), and whether the file was exactly right every time.

Set-up is benches/outside_edits.py's: peers in target/bench-peers (it
installs serena-agent 2.1.0 and the MCP client there), the release build
of tether.

Run:  python3 benches/edit_symbol_bench.py [--peers tether,serena] [--trials 3]
Prints one `RESULT {json}` line per server and task, then a table.
"""
from __future__ import annotations

import argparse
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

CALL_TIMEOUT_S = 300
APP = "fastapi/applications.py"
OAUTH = "fastapi/security/oauth2.py"
OLD_RETURN = "        return self.router.on_event(event_type)\n"
NEW_BODY = "handler = self.router.on_event(event_type)\nreturn handler"
NEW_RETURN = "        handler = self.router.on_event(event_type)\n        return handler\n"
METHOD = "    def __len__(self) -> int:\n        return len(self.scopes)\n"
METHOD_COL0 = "def __len__(self) -> int:\n    return len(self.scopes)\n"
UTILS = "fastapi/utils.py"
UNIQUE_BODY = """    operation_id = f"{route.name}{route.path_format}"
    operation_id = re.sub(r"\\W", "_", operation_id)
    assert route.methods
    operation_id = f"{operation_id}_{list(route.methods)[0].lower()}"
    return operation_id
"""


def read(rel: str) -> str:
    with open(os.path.join(oe.PROJECT, rel), encoding="utf-8", newline="") as f:
        return f.read()


def write(rel: str, text: str) -> None:
    with open(os.path.join(oe.PROJECT, rel), "w", encoding="utf-8", newline="") as f:
        f.write(text)


def expected_body(original: str) -> str:
    assert original.count(OLD_RETURN) == 1
    return original.replace(OLD_RETURN, NEW_RETURN)


def expected_method(original: str) -> str:
    # `__init__` is the class's last member and the file's last code.
    assert original.endswith('] = " ".join(self.scopes)\n')
    return original + "\n" + METHOD


def crlf(text: str) -> str:
    return text.replace("\n", "\r\n")


def expected_crlf(start: str) -> str:
    old = crlf(UNIQUE_BODY)
    assert start.count(old) == 1
    return start.replace(old, crlf("    return route.name\n"))


def first_difference(expected: str, got: str) -> str:
    """Where `got` first differs from `expected`: the line, both ways."""
    if expected.replace("\r\n", "\n") == got.replace("\r\n", "\n"):
        return (f"line endings: expected {expected.count(chr(13))} CRs, the file has {got.count(chr(13))}")
    a, b = expected.split("\n"), got.split("\n")
    for k, (x, y) in enumerate(zip(a, b), 1):
        if x != y:
            return f"line {k}: expected {x!r}, the file has {y!r}"
    return f"expected {len(a)} lines, the file has {len(b)}"


def same(text: str) -> str:
    return text


def text_of(result) -> str:
    return "".join(getattr(c, "text", "") for c in result.content)


# Each task per server: steps, each `(tool, args)` or a function of the
# answers so far giving one.

def tether_body():
    return [("lsp_edit", {"action": "replace", "file": APP, "symbol": "FastAPI.on_event", "body_only": True,
                          "text": NEW_BODY})]


def serena_body():
    def changed(answers):
        found = json.loads(answers[0]["text"])
        body = found[0]["body"]
        if body.count("return self.router.on_event(event_type)") != 1:
            raise RuntimeError(f"find_symbol's body does not hold the return once: {body[-200:]!r}")
        new = body.replace("return self.router.on_event(event_type)",
                           "handler = self.router.on_event(event_type)\n        return handler")
        return ("replace_symbol_body", {"name_path": "FastAPI/on_event", "relative_path": APP, "body": new})

    return [
        ("find_symbol", {"name_path_pattern": "FastAPI/on_event", "relative_path": APP, "include_body": True}),
        changed,
    ]


def tether_method_col0():
    return [("lsp_edit", {"action": "insert_after", "file": OAUTH, "symbol": "SecurityScopes.__init__",
                          "text": METHOD_COL0})]


def serena_method_col0():
    return [("insert_after_symbol", {"name_path": "SecurityScopes/__init__", "relative_path": OAUTH,
                                     "body": METHOD_COL0})]


def tether_crlf():
    return [("lsp_edit", {"action": "replace", "file": UTILS, "symbol": "generate_unique_id", "body_only": True,
                          "text": "return route.name"})]


def serena_crlf():
    def changed(answers):
        body = json.loads(answers[0]["text"])[0]["body"]
        eol = "\r\n" if "\r\n" in body else "\n"
        first = body.split("\n")[0].rstrip("\r")
        return ("replace_symbol_body", {"name_path": "generate_unique_id", "relative_path": UTILS,
                                        "body": f"{first}{eol}    return route.name"})

    return [
        ("find_symbol", {"name_path_pattern": "generate_unique_id", "relative_path": UTILS, "include_body": True}),
        changed,
    ]


def tether_method():
    return [("lsp_edit", {"action": "insert_after", "file": OAUTH, "symbol": "SecurityScopes.__init__",
                          "text": METHOD})]


def serena_method():
    return [("insert_after_symbol", {"name_path": "SecurityScopes/__init__", "relative_path": OAUTH,
                                     "body": METHOD})]


# Each task: the file, what it starts as (from the original), what it
# must be after, and each server's steps.
TASKS = {
    "body": (APP, same, expected_body, {"tether": tether_body, "serena": serena_body}),
    "method": (OAUTH, same, expected_method, {"tether": tether_method, "serena": serena_method}),
    "method, text at column 0": (OAUTH, same, expected_method,
                                 {"tether": tether_method_col0, "serena": serena_method_col0}),
    "body of a CRLF file": (UTILS, crlf, expected_crlf, {"tether": tether_crlf, "serena": serena_crlf}),
}
WARM_UP = {
    "tether": ("lsp", {"action": "symbols", "file": OAUTH}),
    "serena": ("get_symbols_overview", {"relative_path": OAUTH}),
}


async def run(name: str, trials: int) -> list[dict]:
    peer = oe.peers()[name]
    peer.prepare()
    params = StdioServerParameters(command=peer.command, args=peer.args, env={**os.environ, **peer.env},
                                   cwd=oe.PROJECT)
    out = []
    async with stdio_client(params) as (r, w):
        async with ClientSession(r, w) as s:
            await s.initialize()
            tool, args = WARM_UP[name]
            with anyio.fail_after(CALL_TIMEOUT_S):
                await s.call_tool(tool, args)
            for task, (rel, start_of, expected_of, steps) in TASKS.items():
                original = read(rel)
                start = start_of(original)
                expected = expected_of(start)
                write(rel, start)
                await anyio.sleep(1.0)
                times, right, answers, wrong = [], 0, [], None
                try:
                    for _ in range(trials):
                        answers, t0 = [], time.monotonic()
                        for step in steps[name]():
                            tool, args = step(answers) if callable(step) else step
                            with anyio.fail_after(CALL_TIMEOUT_S):
                                result = await s.call_tool(tool, args)
                            answers.append({"text": text_of(result), "error": result.is_error,
                                            "sent": len(json.dumps(args))})
                        times.append(time.monotonic() - t0)
                        after = read(rel)
                        right += after == expected
                        if after != expected and wrong is None:
                            wrong = first_difference(expected, after)
                        write(rel, start)
                        # Each server's own watcher takes the restore in.
                        await anyio.sleep(1.0)
                finally:
                    write(rel, original)
                out.append({
                    "server": name,
                    "task": task,
                    "calls": len(answers),
                    "characters_sent": sum(a["sent"] for a in answers),
                    "characters_answered": sum(len(a["text"]) for a in answers),
                    "median_s": round(statistics.median(times), 3),
                    "times_s": [round(t, 3) for t in times],
                    "exactly_right": f"{right}/{trials}",
                    "first_difference": wrong,
                    "errors": [a["text"][:300] for a in answers if a["error"]],
                    "last_answer": answers[-1]["text"][:600] if answers else "",
                })
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--peers", default="tether,serena")
    ap.add_argument("--trials", type=int, default=3)
    args = ap.parse_args()
    results = []
    for name in args.peers.split(","):
        oe.log(f"{name}: starting")
        try:
            res = anyio.run(run, name, args.trials)
        except Exception as e:  # a peer that fails is reported, the run goes on
            while isinstance(e, BaseExceptionGroup) and len(e.exceptions) == 1:
                e = e.exceptions[0]
            traceback.print_exception(e, file=sys.stderr)
            res = [{"server": name, "task": "-", "failed": f"{type(e).__name__}: {e}"}]
        for r in res:
            print("RESULT " + json.dumps(r), flush=True)
        results.extend(res)
    print("\n| task | server | calls | characters sent / answered | median s | file exactly right |")
    print("|---|---|---|---|---|---|")
    for r in results:
        if "failed" in r:
            print(f"| - | {r['server']} | failed: {r['failed']} |")
            continue
        print(f"| {r['task']} | {r['server']} | {r['calls']} | {r['characters_sent']:,} / {r['characters_answered']:,} "
              f"| {r['median_s']} | {r['exactly_right']} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
