"""The hunt with writers: conversations of one `tether serve --http` run
write the same files at once — `write` (after a `read`), `edit`,
`apply_patch`, `lsp_rename` and `ast_edit` + `resolve` — while a program
outside tether writes them too, two CPU-bound processes run beside, and
the language server is SIGKILLed several times. Used by
tests/it/faults/hunt.rs (a fixture project, a few hundred operations) and
benches/hunt_bench.py --writers (FastAPI and rxjs, 2,000+).

    python3 hunt_writers.py --tether BIN --root DIR --lang python|typescript \
        --names REL --hot REL [REL ...] [--rounds N] [--conversations N] \
        [--kills N] [--busy N] [--seed N] [--seconds S] [--json FILE]

Before the run, each hot file gets a block at its end: an import of the
names module, `hunt_level(1)` (what `ast_edit` rewrites) and
`hunt_fn_0()` (what `lsp_rename` renames, declared in the names module),
and a last line, the sentinel, before which every marker comment goes.

The checker, after every round (all calls answered, the outside write
done): some order of the round's accepted changes, each applied as its
tool defines it to the files as they were when the round began, must give
the files on disk now — so an accepted change is whole and lost by no one,
and a refused one wrote nothing. Each refusal must name its cause. A
thread reading the hot files all the while must never see one partly
written (every read starts with the file's first line and ends with the
sentinel). Prints one `hunt writers:` line; exits 1 on any violation.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import random
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from contextlib import AsyncExitStack

import anyio
import mcp.types as types
from mcp.client.client import Client
from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client

TOKEN = "hunt-writers-token-0123456789abcdef"
# Longer than every bounded wait inside tether: a call that takes this long hangs.
CALL_BOUND_S = 150
# How long `tether serve --http` may take to say it listens.
LISTEN_WITHIN_S = 30
# Words by which a refusal names its cause.
CAUSES = [
    "changed since you read it",  # write over what the conversation did not see
    "does not occur",  # edit whose old text is gone
    "does not apply",  # patch whose context is gone
    "nothing was written",  # a multi-file change whose files moved (commit path)
    "has no identifier",  # rename of a name another rename changed
    "is part of",  # rename of a name now inside a longer one
    "is not on line",  # rename at a declaration another rename changed
] + (SERVER_DIED := [
    "exited",  # the killed language server
    "can no longer answer",
    "restart",
    "not ready",
])
# The language servers the hunt kills, by what their command lines hold.
SERVERS = {"python": "pyright", "typescript": "typescript-language-server"}


class Lang:
    def __init__(self, name: str, names_rel: str):
        self.name = name
        self.comment = "#" if name == "python" else "//"
        self.sentinel = f"{self.comment} hunt: end\n"
        self.names_rel = names_rel

    def names_module(self) -> str:
        if self.name == "python":
            return "def hunt_fn_0() -> int:\n    return 0\n\n\ndef hunt_level(n: int) -> int:\n    return n\n"
        return ("export function hunt_fn_0(): number {\n  return 0;\n}\n\n"
                "export function hunt_level(n: number): number {\n  return n;\n}\n")

    def block(self, hot_rel: str) -> str:
        if self.name == "python":
            module = self.names_rel[:-3].replace("/", ".")
            return (f"\n\nfrom {module} import hunt_fn_0, hunt_level  # noqa: E402\n\n"
                    f"_HUNT_A = hunt_level(1)\n_HUNT_B = hunt_fn_0()\n{self.sentinel}")
        rel = os.path.relpath(self.names_rel[:-3], os.path.dirname(hot_rel))
        if not rel.startswith("."):
            rel = "./" + rel
        return (f"\nimport {{ hunt_fn_0, hunt_level }} from '{rel}';\n\n"
                f"const _huntA = hunt_level(1);\nconst _huntB = hunt_fn_0();\n{self.sentinel}")

    def declaration(self, name: str) -> str:
        return f"def {name}(" if self.name == "python" else f"export function {name}("


# ---- the model: what each accepted change does to the files ----

LEVEL = re.compile(r"hunt_level\(([^()]*)\)")


def whole_word(text: str, old: str, new: str) -> str:
    return re.sub(rf"\b{re.escape(old)}\b", new, text)


class Change:
    """One change the round made; `apply` gives the files after it, or None
    when it could not have been made to these files."""

    def __init__(self, who: str, kind: str, describe: str, apply, paths: list[str]):
        self.who, self.kind, self.describe, self.apply = who, kind, describe, apply
        # The files it may write.
        self.paths = paths


def replace_once(path: str, old: str, new: str):
    def apply(files: dict) -> dict | None:
        if files[path].count(old) != 1:
            return None
        return {**files, path: files[path].replace(old, new)}
    return apply


def set_content(path: str, before: str | None, after: str):
    def apply(files: dict) -> dict | None:
        if before is not None and files[path] != before:
            return None
        return {**files, path: after}
    return apply


def rename(decl_path: str, old: str, new: str, declaration: str):
    def apply(files: dict) -> dict | None:
        if declaration not in files[decl_path]:
            return None
        return {p: whole_word(t, old, new) for p, t in files.items()}
    return apply


def rewrite_levels(paths: list[str]):
    def apply(files: dict) -> dict | None:
        out = dict(files)
        for p in paths:
            if not LEVEL.search(out[p]):
                return None
            out[p] = LEVEL.sub(lambda m: f"hunt_level({m.group(1)} + 1)", out[p])
        return out
    return apply


def explain(before: dict, after: dict, changes: list[Change]) -> str | None:
    """None when some order of `changes` takes `before` to `after`;
    otherwise what differs for the order that comes closest."""
    best = None
    for order in itertools.permutations(changes):
        files = before
        for c in order:
            files = c.apply(files)
            if files is None:
                break
        if files is None:
            continue
        if files == after:
            return None
        differing = [p for p in after if files.get(p) != after[p]]
        if best is None or len(differing) < len(best[1]):
            best = (files, differing, order)
    if best is None:
        return "no order of the accepted changes can be made to the files as they were: " + \
            "; ".join(f"{c.who} {c.describe}" for c in changes)
    files, differing, order = best
    lines = []
    for p in differing:
        lines.append(f"{p}: expected {files[p][-300:]!r}, on disk {after[p][-300:]!r}")
    return ("the files on disk are no order of the accepted changes ("
            + ", ".join(f"{c.who} {c.describe}" for c in order) + "): " + "; ".join(lines))


def self_test():
    """The checker catches what the hunt is for: a lost update, a half-made
    multi-file change, a refused change that wrote anyway."""
    a, b = "a.py", "b.py"
    before = {a: "x = hunt_level(1)\n# w1\n", b: "y = hunt_level(1)\n"}
    edit = Change("c1", "edit", "edit", replace_once(a, "# w1\n", "# e2\n"), [a])
    outside = Change("outside", "outside", "write", set_content(a, None, "x = hunt_level(1)\n# w1\n# o3\n"), [a])
    both = Change("c2", "ast_edit+resolve", "rewrite", rewrite_levels([a, b]), [a, b])
    made = {a: "x = hunt_level(1)\n# e2\n# o3\n", b: before[b]}
    assert explain(before, made, [edit, outside]) is None, "the outside write, then the edit"
    write = Change("c3", "write", "write", set_content(a, before[a], "x = hunt_level(1)\n# w1\n# w4\n"), [a])
    lost = {a: "x = hunt_level(1)\n# w1\n# w4\n", b: before[b]}
    assert explain(before, lost, [edit, write]) is not None, "the edit was lost under a write"
    half = {a: "x = hunt_level(1 + 1)\n# w1\n", b: before[b]}
    assert explain(before, half, [both]) is not None, "half of a two-file change"
    whole = {a: "x = hunt_level(1 + 1)\n# w1\n", b: "y = hunt_level(1 + 1)\n"}
    assert explain(before, whole, [both]) is None
    assert explain(before, whole, []) is not None, "a refused change that wrote"
    print("self-test: the checker catches a lost update, a half-made change and a refused change that wrote")


# ---- the run ----

def snapshot(root: str, paths: list[str]) -> dict:
    out = {}
    for p in paths:
        with open(os.path.join(root, p), encoding="utf-8", newline="") as f:
            out[p] = f.read()
    return out


def write_atomically(path: str, text: str):
    tmp = os.path.join(os.path.dirname(path), f".hunt-outside-{os.getpid()}-{threading.get_ident()}")
    with open(tmp, "w", encoding="utf-8", newline="") as f:
        f.write(text)
    os.replace(tmp, path)


def descendants(root: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = open(f"/proc/{entry}/stat").read()
            except OSError:
                continue
            children.setdefault(int(stat.rsplit(")", 1)[1].split()[1]), []).append(int(entry))
    out, todo = [], [root]
    while todo:
        for c in children.get(todo.pop(), []):
            out.append(c)
            todo.append(c)
    return out


def kill_server(serve_pid: int, server: str) -> list[int]:
    """SIGKILLs the language servers `tether serve` started (not their
    own children: tether must notice the death itself)."""
    killed = []
    for pid in descendants(serve_pid):
        try:
            cmd = open(f"/proc/{pid}/cmdline", "rb").read().replace(b"\0", b" ").decode(errors="replace")
            ppid = int(open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[1])
        except OSError:
            continue
        if server in cmd and server not in _cmdline(ppid):
            os.kill(pid, signal.SIGKILL)
            killed.append(pid)
    return killed


def _cmdline(pid: int) -> str:
    try:
        return open(f"/proc/{pid}/cmdline", "rb").read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


class Poller(threading.Thread):
    """Reads the hot files over and over; a read that does not begin with
    the file's first line and end with the sentinel saw a partial write."""

    def __init__(self, root: str, heads: dict, sentinel: str):
        super().__init__(daemon=True)
        self.root, self.heads, self.sentinel = root, heads, sentinel
        self.reads, self.partial, self.stop = 0, [], threading.Event()

    def run(self):
        while not self.stop.is_set():
            for p, head in self.heads.items():
                try:
                    with open(os.path.join(self.root, p), encoding="utf-8", newline="") as f:
                        text = f.read()
                except (OSError, UnicodeDecodeError) as e:
                    self.partial.append(f"{p}: unreadable: {e}")
                    continue
                self.reads += 1
                if not (text.startswith(head) and text.endswith(self.sentinel)):
                    self.partial.append(f"{p}: read {len(text)} characters ending {text[-80:]!r}")
            time.sleep(0.002)


def text_of(result) -> str:
    return "\n".join(c.text for c in result.content if isinstance(c, types.TextContent))


async def call(client, tool: str, args: dict) -> tuple[str, bool, dict]:
    try:
        with anyio.fail_after(CALL_BOUND_S):
            r = await client.call_tool(tool, args)
        return text_of(r), bool(r.is_error), (r.structured_content or {})
    except Exception as e:  # a transport failure or a hang is an answer the checker must see
        return f"client failure: {type(e).__name__}: {e}", True, {}


class Hunt:
    def __init__(self, args):
        self.args = args
        self.root = os.path.realpath(args.root)
        self.lang = Lang(args.lang, args.names)
        self.hot = args.hot
        self.tracked = [args.names] + self.hot
        self.rng = random.Random(args.seed)
        self.serial = 0
        self.violations: list[str] = []
        self.calls = 0
        self.tally: dict[str, list[int]] = {}  # kind -> [accepted, refused]
        self.refusals: dict[str, int] = {}
        self.outside = 0
        self.kills: list[int] = []
        self.latencies: list[float] = []
        self.rounds_done = 0

    def prepare(self):
        with open(os.path.join(self.root, self.lang.names_rel), "w") as f:
            f.write(self.lang.names_module())
        for rel in self.hot:
            path = os.path.join(self.root, rel)
            with open(path, encoding="utf-8", newline="") as f:
                text = f.read()
            with open(path, "w", encoding="utf-8", newline="") as f:
                f.write(text.rstrip("\n") + "\n" + self.lang.block(rel))

    def next(self) -> int:
        self.serial += 1
        return self.serial

    def marker(self, tag: str) -> str:
        return f"{self.lang.comment} {tag}{self.next()}\n"

    def markers(self, text: str) -> list[str]:
        c = re.escape(self.lang.comment)
        return [m + "\n" for m in re.findall(rf"^{c} [wepo]\d+$", text, re.M)]

    def name_now(self, files: dict) -> str:
        return re.search(r"hunt_fn_\d+", files[self.lang.names_rel]).group(0)

    def line_of(self, text: str, needle: str) -> int:
        return text[: text.index(needle)].count("\n") + 1

    # Each operation: its calls, and the change it makes if accepted.
    async def op(self, who: str, client, files: dict, out: list, refusals: list):
        kind = self.rng.choice(["write", "edit", "edit", "apply_patch", "apply_patch", "lsp_rename", "ast_edit"])
        path = self.rng.choice(self.hot)
        text = files[path]
        started = time.monotonic()
        change, answer, refused = None, "", False
        if kind == "write":
            answer, err, data = await call(client, "read", {"path": path})
            self.calls += 1
            if err:
                self.violations.append(f"{who} read {path}: {answer}")
                return
            seen = answer.encode()[: data.get("bytes", len(answer.encode()))].decode()
            new = seen.replace(self.lang.sentinel, self.marker("w") + self.lang.sentinel)
            answer, refused, _ = await call(client, "write", {"path": path, "content": new})
            change = Change(who, kind, f"write {path} over what it read", set_content(path, seen, new), [path])
        elif kind == "edit":
            olds = self.markers(text)
            old = self.rng.choice(olds) if olds and self.rng.random() < 0.6 else self.lang.sentinel
            new = self.marker("e") + (self.lang.sentinel if old == self.lang.sentinel else "")
            answer, refused, _ = await call(client, "edit", {"path": path, "old_string": old, "new_string": new})
            change = Change(who, kind, f"edit {path} {old.strip()!r}", replace_once(path, old, new), [path])
        elif kind == "apply_patch":
            olds = self.markers(text)
            if olds and self.rng.random() < 0.6:
                old = self.rng.choice(olds)
                new = self.marker("p")
                n = self.line_of(text, old)
                hunk = f"@@ -{n},2 +{n},2 @@\n-{old}+{new} {self.lang.sentinel}" if text.endswith(old + self.lang.sentinel) \
                    else f"@@ -{n},1 +{n},1 @@\n-{old}+{new}"
                block_old, block_new = old, new
            else:
                new = self.marker("p")
                n = self.line_of(text, self.lang.sentinel)
                hunk = f"@@ -{n},1 +{n},2 @@\n+{new} {self.lang.sentinel}"
                block_old, block_new = self.lang.sentinel, new + self.lang.sentinel
            patch = f"--- a/{path}\n+++ b/{path}\n{hunk}"
            answer, refused, _ = await call(client, "apply_patch", {"patch": patch})
            change = Change(who, kind, f"patch {path} {block_old.strip()!r}", replace_once(path, block_old, block_new),
                            [path])
        elif kind == "lsp_rename":
            names = files[self.lang.names_rel]
            old = self.name_now(files)
            new = f"hunt_fn_{self.next()}"
            decl = self.lang.declaration(old)
            line = self.line_of(names, decl)
            args = {"file": self.lang.names_rel, "line": line, "symbol": old, "new_name": new}
            answer, refused, _ = await call(client, "lsp_rename", args)
            change = Change(who, kind, f"rename {old} -> {new}",
                            rename(self.lang.names_rel, old, new, decl), self.tracked)
        else:
            scope = {} if self.rng.random() < 0.3 else {"path": path}
            staged, err, data = await call(client, "ast_edit", {"pattern": "hunt_level($N)",
                                                                "rewrite": "hunt_level($N + 1)",
                                                                "language": self.lang.name, **scope})
            self.calls += 1
            edit_id = ((data.get("staged") or {}).get("edit_id"))
            if err or not edit_id:
                self.violations.append(f"{who} ast_edit {scope}: nothing staged: {staged}")
                return
            paths = sorted(data["staged"]["files"])
            if not set(paths) <= set(self.hot):
                self.violations.append(f"{who} ast_edit staged files outside the hot ones: {paths}")
                return
            answer, refused, _ = await call(client, "resolve", {"edit_id": edit_id, "action": "accept"})
            kind = "ast_edit+resolve"
            change = Change(who, kind, f"rewrite hunt_level in {', '.join(paths)}", rewrite_levels(paths), paths)
        self.calls += 1
        self.latencies.append(time.monotonic() - started)
        counts = self.tally.setdefault(kind, [0, 0])
        if self.args.verbose:
            print(f"{who} {change.describe}: {'refused' if refused else 'accepted'}: {answer[:300]!r}", file=sys.stderr)
        if refused:
            counts[1] += 1
            cause = next((c for c in CAUSES if c in answer), None)
            if cause is None:
                self.violations.append(f"{who} {change.describe}: a refusal naming no cause: {answer[:400]}")
            else:
                self.refusals[cause] = self.refusals.get(cause, 0) + 1
            refusals.append((change, answer))
            if answer.startswith("client failure"):
                self.violations.append(f"{who} {change.describe}: {answer}")
        else:
            counts[0] += 1
            out.append(change)

    async def outside_write(self, delay: float, out: list):
        await anyio.sleep(delay)
        path = self.rng.choice(self.hot)
        full = os.path.join(self.root, path)
        with open(full, encoding="utf-8", newline="") as f:
            text = f.read()
        olds = self.markers(text)
        if olds and self.rng.random() < 0.5:
            old = self.rng.choice(olds)
            new_text = text.replace(old, self.marker("o"), 1)
        else:
            new_text = text.replace(self.lang.sentinel, self.marker("o") + self.lang.sentinel)
        write_atomically(full, new_text)
        self.outside += 1
        out.append(Change("outside", "outside", f"write {path}", set_content(path, None, new_text), [path]))

    async def run(self) -> dict:
        a = self.args
        self.prepare()
        heads = {p: open(os.path.join(self.root, p), encoding="utf-8").readline() for p in self.hot}
        port = socket.socket()
        port.bind(("127.0.0.1", 0))
        addr = f"127.0.0.1:{port.getsockname()[1]}"
        port.close()
        serve = subprocess.Popen([a.tether, "serve", "--trusted", "--workdir", self.root, "--http", addr],
                                 env=dict(os.environ, TETHER_TOKEN=TOKEN), stdin=subprocess.DEVNULL,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        busy = [subprocess.Popen(["sh", "-c", "while :; do :; done"]) for _ in range(a.busy)]
        poller = Poller(self.root, heads, self.lang.sentinel)
        started = time.monotonic()
        try:
            listening = threading.Event()

            def drain():
                for line in serve.stderr:
                    if "MCP over HTTP" in line:
                        listening.set()
            threading.Thread(target=drain, daemon=True).start()
            if not listening.wait(LISTEN_WITHIN_S):
                raise RuntimeError(f"tether serve --http did not say it listens within {LISTEN_WITHIN_S} s")
            url = f"http://{addr}/mcp"
            kill_rounds = {a.rounds * (k + 1) // (a.kills + 1) for k in range(a.kills)}
            async with AsyncExitStack() as stack:
                clients = []
                for i in range(a.conversations):
                    http = create_mcp_http_client(headers={"Authorization": f"Bearer {TOKEN}"})
                    info = types.Implementation(name=f"hunt-writer-{i}", version="1")
                    c = await stack.enter_async_context(
                        Client(streamable_http_client(url, http_client=http), client_info=info))
                    clients.append((f"conversation-{i}", c))
                # Warm: the server has read the project before the first round.
                await call(clients[0][1], "lsp", {"action": "diagnostics", "file": self.hot[0]})
                poller.start()
                for rnd in range(a.rounds):
                    if a.seconds and time.monotonic() - started > a.seconds:
                        break
                    self.rounds_done = rnd + 1
                    before = snapshot(self.root, self.tracked)
                    changes: list[Change] = []
                    refused: list[tuple[Change, str]] = []
                    async with anyio.create_task_group() as tg:
                        for who, c in clients:
                            tg.start_soon(self.op, who, c, before, changes, refused)
                        if self.rng.random() < a.outside:
                            tg.start_soon(self.outside_write, self.rng.random() * 0.5, changes)
                        if rnd in kill_rounds:
                            async def kill():
                                await anyio.sleep(0.05 + self.rng.random() * 0.2)
                                self.kills.extend(kill_server(serve.pid, SERVERS[self.lang.name]))
                            tg.start_soon(kill)
                    after = snapshot(self.root, self.tracked)
                    why = explain(before, after, changes)
                    if why:
                        self.violations.append(f"round {rnd}: {why}")
                    for c, answer in refused:
                        if any(w in answer for w in SERVER_DIED):
                            if not (rnd in kill_rounds or rnd - 1 in kill_rounds):
                                self.violations.append(f"round {rnd}: {c.who} {c.describe}: refused for a server "
                                                       f"death outside the kill rounds: {answer[:300]}")
                        elif not any(o.who != c.who and set(o.paths) & set(c.paths) for o in changes):
                            self.violations.append(f"round {rnd}: {c.who} {c.describe} was refused, and nobody "
                                                   f"else wrote its files: {answer[:300]}")
                    if serve.poll() is not None:
                        self.violations.append(f"round {rnd}: tether serve exited ({serve.returncode})")
                        break
        finally:
            poller.stop.set()
            for b in busy:
                b.kill()
            serve.send_signal(signal.SIGTERM)
            try:
                serve.wait(20)
            except subprocess.TimeoutExpired:
                serve.kill()
        self.violations += [f"a partial file seen: {p}" for p in poller.partial[:20]]
        lat = sorted(self.latencies) or [0.0]
        return {
            "calls": self.calls, "rounds": self.rounds_done, "conversations": a.conversations,
            "by_kind": self.tally, "refusal_causes": self.refusals, "outside_writes": self.outside,
            "servers_killed": len(self.kills), "kill_rounds": a.kills, "busy": a.busy, "polled_reads": poller.reads,
            "violations": len(self.violations), "p50_s": lat[len(lat) // 2], "p99_s": lat[int((len(lat) - 1) * 0.99)],
            "seconds": time.monotonic() - started, "seed": a.seed,
        }


def main():
    ap = argparse.ArgumentParser()
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    ap.add_argument("--tether", required=True)
    ap.add_argument("--root", required=True)
    ap.add_argument("--lang", choices=sorted(SERVERS), required=True)
    ap.add_argument("--names", required=True, help="the names module to create, relative to the root")
    ap.add_argument("--hot", nargs="+", required=True, help="the files every conversation writes")
    ap.add_argument("--rounds", type=int, default=60)
    ap.add_argument("--conversations", type=int, default=4)
    ap.add_argument("--kills", type=int, default=2)
    ap.add_argument("--busy", type=int, default=2)
    ap.add_argument("--outside", type=float, default=0.6, help="chance of an outside write in a round")
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--seconds", type=float, default=0,
                    help="start no round after this many seconds (0: no bound); the figures say how many ran")
    ap.add_argument("--json", help="write the figures here too")
    ap.add_argument("--verbose", action="store_true", help="print every answer")
    args = ap.parse_args()
    hunt = Hunt(args)
    figures = anyio.run(hunt.run)
    for v in hunt.violations[:30]:
        print(f"violation: {v}", file=sys.stderr)
    print(f"hunt writers: {figures['calls']} calls by {figures['conversations']} conversations over "
          f"{figures['rounds']} rounds ({json.dumps(figures['by_kind'])} accepted/refused); "
          f"{figures['outside_writes']} outside writes; {args.lang} server killed {figures['servers_killed']} times; "
          f"{args.busy} CPU-bound processes; refusals by cause {json.dumps(figures['refusal_causes'])}; "
          f"{figures['polled_reads']} polled reads; {figures['violations']} violations; "
          f"p50 {figures['p50_s'] * 1000:.0f} ms, p99 {figures['p99_s'] * 1000:.0f} ms; "
          f"{figures['seconds']:.0f} s (seed {args.seed})", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(figures, f, indent=1)
    sys.exit(1 if hunt.violations else 0)


if __name__ == "__main__":
    main()
