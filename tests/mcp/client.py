"""Drives `tether serve` with the official MCP Python SDK (PyPI `mcp`).

    python3 client.py SCENARIO TETHER_BIN WORKDIR [extra tether flags…]

Each scenario asserts what a real MCP host would see and exits non-zero
with the reason on the first mismatch. `tests/mcp.rs` runs one scenario per
test. The client connects in the SDK's default `auto` mode: it probes for
the 2026 protocol, and tether answers with the handshake-era versions it
serves (elicitation needs them), so the SDK falls back to `initialize`.
"""

import json
import os
import sys
import time

import anyio
import mcp.types as types
from mcp import StdioServerParameters
from mcp.client import Client

SCENARIO, TETHER, WORKDIR = sys.argv[1], sys.argv[2], sys.argv[3]
EXTRA = sys.argv[4:]


def server(*flags):
    return StdioServerParameters(
        command=TETHER, args=["serve", "--trusted", "--workdir", WORKDIR, *EXTRA, *flags], env=dict(os.environ)
    )


def text_of(result):
    return "\n".join(c.text for c in result.content if isinstance(c, types.TextContent))


def check(cond, what, detail=""):
    if not cond:
        raise AssertionError(f"{what}\n--- detail ---\n{detail}")


def alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
        return state not in ("Z", "X")
    except FileNotFoundError:
        return False


def pids_in(node, out):
    if node.get("pid"):
        out.append((node["kind"], node["id"], node["pid"]))
    for child in node.get("children", []):
        pids_in(child, out)
    return out


async def tree_json(client):
    res = await client.read_resource("tether://tree")
    by_mime = {c.mime_type: c.text for c in res.contents}
    check("application/json" in by_mime and "text/plain" in by_mime, "the tree comes as text and JSON", by_mime)
    check(by_mime["text/plain"].startswith("router "), "the text tree starts at the router", by_mime["text/plain"])
    return json.loads(by_mime["application/json"])


# --- scenarios ---------------------------------------------------------------


def answers_nothing():
    # A callback makes the SDK declare the elicitation capability.
    return elicitation(lambda p: types.ElicitResult(action="decline"))


async def tools_on_surfaces():
    async with Client(server(), elicitation_callback=answers_nothing()) as c:
        tools = (await c.list_tools()).tools
        names = sorted(t.name for t in tools)
        for expected in ["ast_grep", "ast_edit", "resolve", "lsp", "lsp_edit", "lsp_rename", "eval", "debug", "ask_user"]:
            check(expected in names, f"`{expected}` is on the full surface", names)
        for t in tools:
            check(t.input_schema.get("type") == "object", f"{t.name} has an object schema", t.input_schema)
            check(len(t.description or "") > 12, f"{t.name} has a description written for a model", t.description)
        eval_tool = next(t for t in tools if t.name == "eval")
        check("code" in eval_tool.input_schema["properties"], "eval's schema names its arguments", eval_tool.input_schema)
    async with Client(server("--surface", "read-only"), elicitation_callback=answers_nothing()) as c:
        names = sorted(t.name for t in (await c.list_tools()).tools)
        check(names == ["ask_user", "ast_grep", "lsp", "read", "resources"], "the read-only surface has read-level tools only", names)
        res = await c.call_tool("eval", {"code": "1", "description": "try to run a cell anyway"})
        check(res.is_error, "a write/exec tool called anyway is refused as a tool error", text_of(res))
        check("read-only" in text_of(res), "the refusal names the surface", text_of(res))
    # A client that cannot show a question is not offered the tool that asks one.
    async with Client(server()) as c:
        names = sorted(t.name for t in (await c.list_tools()).tools)
        check("ask_user" not in names and "lsp" in names, "no elicitation: no ask_user in tools/list", names)
        uris = [str(r.uri) for r in (await c.list_resources()).resources]
        check("tether://tools/ask_user" not in uris, "nor its reference", uris)
        instructions = c.instructions or ""
        check("ask_user" not in instructions and "the human" not in instructions, "nor the instructions", instructions)
        res = await c.call_tool("ask_user", {"question": "Which?"})
        check(res.is_error and "elicitation capability" in text_of(res), "called anyway: refused with the reason", text_of(res))
    print("ok")


async def calls_and_content():
    async with Client(server()) as c:
        res = await c.call_tool("ast_grep", {"pattern": "print($A)"})
        check(not res.is_error, "ast_grep succeeds", text_of(res))
        check("app.py:4:1: print(total_area([unit, Square(2.0)]))" in text_of(res), "ast_grep's text", text_of(res))
        check(res.structured_content["total"] == 2, "ast_grep's data is structured content", res.structured_content)

        res = await c.call_tool("lsp", {"action": "definition", "file": "app.py", "line": 4, "symbol": "total_area"})
        check(not res.is_error, "an lsp query succeeds", text_of(res))
        check("shapes.py:16:5: def total_area" in text_of(res), "pyright's definition", text_of(res))

        code = "import matplotlib.pyplot as plt\nfig, ax = plt.subplots()\nax.plot([1, 2, 3], [1, 4, 9])\nNone"
        res = await c.call_tool("eval", {"code": code, "description": "plot three points as a line"})
        check(not res.is_error, "the plotting cell runs", text_of(res))
        images = [b for b in res.content if isinstance(b, types.ImageContent)]
        check(len(images) == 1 and images[0].mime_type == "image/png", "the figure is image content", res.content)
        import base64

        check(base64.b64decode(images[0].data)[:8] == b"\x89PNG\r\n\x1a\n", "a real PNG")

        res = await c.call_tool("read", {"path": "../outside.txt"})
        check(res.is_error, "a tool error is a result with isError", text_of(res))
        res = await c.call_tool("no_such_tool", {})
        check(res.is_error and "unknown tool" in text_of(res), "an unknown tool is a tool error too", text_of(res))
        res = await c.call_tool("ast_grep", {"pattern": 5})
        check(res.is_error and "`pattern`" in text_of(res), "bad arguments name the field", text_of(res))
    print("ok")


async def cancel_and_progress():
    async with Client(server()) as c:
        res = await c.call_tool("eval", {"code": "kept = 41", "description": "set a variable to keep"})
        check(not res.is_error, "the first cell runs", text_of(res))
        # The SDK gives up after the read timeout and sends notifications/cancelled.
        started = time.monotonic()
        try:
            await c.call_tool(
                "eval",
                {"code": "import time\nwhile True:\n    time.sleep(0.05)", "description": "loop forever until it is cancelled"},
                read_timeout_seconds=2,
            )
            raise AssertionError("the endless cell returned")
        except AssertionError:
            raise
        except Exception as e:  # the SDK's timeout error
            check(time.monotonic() - started < 10, "the client gave up on its own timeout", repr(e))
        # Nothing else was disturbed, and the cell was interrupted with its kernel kept.
        res = await c.call_tool("ast_grep", {"pattern": "print($A)"})
        check(not res.is_error, "other tools still answer", text_of(res))
        started = time.monotonic()
        res = await c.call_tool("eval", {"code": "kept + 1", "description": "read the kept variable back"})
        took = time.monotonic() - started
        check(not res.is_error and "42" in text_of(res), "the kernel kept its state", text_of(res))
        check(took < 5, f"the next cell did not wait behind the cancelled one ({took:.1f} s)")

        seen = []

        async def on_progress(progress, total, message):
            seen.append((progress, message))

        res = await c.call_tool(
            "eval",
            {"code": "import time\ntime.sleep(2.6)\n'slept'", "description": "sleep a little to show progress"},
            progress_callback=on_progress,
        )
        check(not res.is_error, "the slow cell finishes", text_of(res))
        check(len(seen) >= 2, "progress notifications arrived while the cell ran", seen)
        check(all("eval running for" in (m or "") for _, m in seen), "progress says what runs", seen)
        check([p for p, _ in seen] == sorted(p for p, _ in seen), "progress only grows", seen)
    print("ok")


def elicitation(answer, delay=0.0, log=None):
    async def callback(context, params):
        if log is not None:
            log.append(params)
        if delay:
            await anyio.sleep(delay)
        return answer(params)

    return callback


async def ask_user_flows():
    question = {
        "question": "Which store should the cache use?",
        "context": "The migration depends on it.",
        "options": [{"label": "sqlite", "description": "one file"}, {"label": "postgres"}],
    }
    log = []
    accept = elicitation(lambda p: types.ElicitResult(action="accept", content={"choice": "postgres"}), log=log)
    async with Client(server(), elicitation_callback=accept) as c:
        res = await c.call_tool("ask_user", question)
        check(not res.is_error, "an answered question succeeds", text_of(res))
        check("chose option 2. postgres" in text_of(res), "the answer names the chosen label", text_of(res))
        check(res.structured_content["labels"] == ["postgres"], "labels in data", res.structured_content)
        msg = log[0].message
        check("Which store" in msg and "Context: The migration" in msg and "1. sqlite — one file" in msg, "the card", msg)
        check("Answer within 10 min." in msg, "the card states its timeout", msg)
        schema = log[0].requested_schema
        check(schema["properties"]["choice"]["enum"] == ["sqlite", "postgres"], "the form lists the options", schema)

        res = await c.call_tool("ask_user", {"question": "", "options": []})
        check(res.is_error and "`question` is empty" in text_of(res), "an empty question is refused", text_of(res))
        dup = {"question": "Which?", "options": [{"label": "a"}, {"label": "A"}]}
        res = await c.call_tool("ask_user", dup)
        check(res.is_error and "appears twice" in text_of(res), "duplicate labels are refused", text_of(res))
        res = await c.call_tool("ask_user", {"question": "Which?", "multi_select": True})
        check(res.is_error and "multi_select" in text_of(res), "multi_select needs options", text_of(res))

    decline = elicitation(lambda p: types.ElicitResult(action="decline"))
    async with Client(server(), elicitation_callback=decline) as c:
        res = await c.call_tool("ask_user", question)
        check(not res.is_error, "a skip is a success", text_of(res))
        check("skipped" in text_of(res) and "do not ask this question again" in text_of(res), "skip wording", text_of(res))

    slow = elicitation(lambda p: types.ElicitResult(action="accept", content={"choice": "sqlite"}), delay=4)
    async with Client(server("--question-timeout", "2"), elicitation_callback=slow) as c:
        started = time.monotonic()
        res = await c.call_tool("ask_user", question)
        took = time.monotonic() - started
        check(res.is_error, "a timeout is an error", text_of(res))
        check("timed out" in text_of(res) and "do not ask this question again" in text_of(res), "timeout wording", text_of(res))
        check(1.5 < took < 4, f"it timed out at the card's limit ({took:.1f} s)")

    async with Client(server()) as c:  # no elicitation callback: no capability declared
        started = time.monotonic()
        res = await c.call_tool("ask_user", question)
        took = time.monotonic() - started
        check(res.is_error and "elicitation" in text_of(res), "no elicitation: fails with the reason", text_of(res))
        check(took < 2, f"and at once ({took:.1f} s)")
    print("ok")


async def permission_prompts():
    cell = {"code": "6 * 7", "description": "multiply two numbers for a check"}
    log = []
    allow = elicitation(lambda p: types.ElicitResult(action="accept", content={"decision": "allow"}), log=log)
    async with Client(server("--approval", "ask"), elicitation_callback=allow) as c:
        res = await c.call_tool("eval", cell)
        check(not res.is_error and "42" in text_of(res), "allowed: the cell runs", text_of(res))
        check("tether wants to run `eval`" in log[0].message, "the permission card names the tool", log[0].message)
        check("multiply two numbers" in log[0].message, "and what it is about to do", log[0].message)
        res = await c.call_tool("ast_grep", {"pattern": "print($A)"})
        check(not res.is_error and len(log) == 1, "read-level tools never ask", log)

    deny = elicitation(lambda p: types.ElicitResult(action="accept", content={"decision": "deny"}))
    async with Client(server("--approval", "ask"), elicitation_callback=deny) as c:
        res = await c.call_tool("write", {"path": "denied.txt", "content": "x"})
        check(res.is_error and "denied permission" in text_of(res), "denied: refused, the model is told", text_of(res))
        check(not os.path.exists(os.path.join(WORKDIR, "denied.txt")), "and the tool did not run")

    async with Client(server("--approval", "ask")) as c:  # nobody to approve
        started = time.monotonic()
        res = await c.call_tool("eval", cell)
        check(res.is_error and "refused" in text_of(res), "no approver: fail closed", text_of(res))
        check(time.monotonic() - started < 2, "at once")
    print("ok")


async def stdin_close_stops_children():
    async with Client(server("--vibe")) as c:
        res = await c.call_tool("eval", {"code": "1", "description": "start the python kernel now"})
        check(not res.is_error, "the kernel starts", text_of(res))
        res = await c.call_tool("lsp", {"action": "hover", "file": "app.py", "line": 4, "symbol": "total_area"})
        check(not res.is_error, "the language server starts", text_of(res))
        res = await c.call_tool("vibe_spawn", {"brief": "sleep", "label": "sleeper", "tier": "fast"})
        check(not res.is_error, "a worker starts", text_of(res))
        tree = await tree_json(c)
        pids = pids_in(tree, [])
        kinds = {k for k, _, _ in pids}
        check({"kernel", "lsp-server", "worker"} <= kinds, "the tree shows every child with its pid", pids)
        check(all(alive(p) for _, _, p in pids), "they run", pids)
    # Leaving the context closed stdin; the SDK waits 2 s before it kills.
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and any(alive(p) for _, _, p in pids):
        time.sleep(0.1)
    left = [(k, i, p) for k, i, p in pids if alive(p)]
    check(not left, "closing stdin stopped every child process", left)
    print("ok")


# Valid arguments for every write/exec tool (so a refusal is the surface's
# or the policy's, never the parser's).
WRITE_EXEC_CALLS = {
    "ast_edit": {"pattern": "old($A)", "rewrite": "pwned($A)"},
    "resolve": {"edit_id": "edit_1", "action": "accept"},
    "lsp_rename": {"file": "a.py", "line": 1, "symbol": "old", "new_name": "pwned"},
    "lsp_edit": {"action": "format", "file": "a.py"},
    "eval": {"code": "open('pwned.txt', 'w').write('x')", "description": "write a file from inside a cell"},
    "debug": {"op": "launch", "program": "prog.py"},
    "write": {"path": "pwned.txt", "content": "x"},
    "edit": {"path": "a.py", "old_string": "old", "new_string": "pwned"},
    "apply_patch": {"patch": "--- /dev/null\n+++ b/pwned.txt\n@@ -0,0 +1 @@\n+x\n"},
}


def files_under(root):
    out = {}
    for dirpath, _, filenames in os.walk(root):
        for name in filenames:
            path = os.path.join(dirpath, name)
            with open(path, "rb") as f:
                out[os.path.relpath(path, root)] = f.read()
    return out


async def refused_calls(c, rounds, refusal):
    attempts = refused = 0
    for _ in range(rounds):
        for tool, args in WRITE_EXEC_CALLS.items():
            res = await c.call_tool(tool, args)
            attempts += 1
            check(res.is_error and f"`{tool}`" in text_of(res) and refusal in text_of(res), f"{tool} is refused ({refusal})", text_of(res))
            refused += 1
    return attempts, refused


async def read_only_entry():
    import subprocess

    before = files_under(WORKDIR)
    rounds = 13
    listed = subprocess.run(
        [TETHER, "tools", "--json", "--vibe", "--questions", "none", "--workdir", WORKDIR], capture_output=True, check=True
    )
    writers = {t["name"] for t in json.loads(listed.stdout) if t["level"] != "read"}
    check(writers <= set(WRITE_EXEC_CALLS), "every write/exec tool is tried here", sorted(writers - set(WRITE_EXEC_CALLS)))
    async with Client(server("--surface", "read-only", "--vibe")) as c:
        names = {t.name for t in (await c.list_tools()).tools}
        check(names and not names & writers, "tools/list on the read-only surface has no write/exec tool", sorted(names))
        attempts, refused = await refused_calls(c, rounds, "read-only surface")
        check(not pids_in(await tree_json(c), []), "no process was started", await tree_json(c))
    async with Client(server("--approval", "deny", "--vibe")) as c:
        names = {t.name for t in (await c.list_tools()).tools}
        check(set(WRITE_EXEC_CALLS) <= names, "deny refuses the tools but still lists them", sorted(names))
        denied_attempts, denied = await refused_calls(c, rounds, "approval policy denies")
        check(not pids_in(await tree_json(c), []), "no process was started", await tree_json(c))
    check(files_under(WORKDIR) == before, "no file changed")
    print(f"mcp: tools/call on the read-only surface: {refused}/{attempts} refused; with --approval deny: {denied}/{denied_attempts} refused ({len(WRITE_EXEC_CALLS)} write/exec tools)")
    print("ok")


async def debug_crash():
    """A model asks the one question: run it, where and why does it crash?"""
    async with Client(server()) as c:
        res = await c.call_tool("debug", {"op": "launch", "program": "crash.py"})
        text = text_of(res)
        check(not res.is_error, "the launch answers", text)
        check(text.startswith("launched; stopped (exception KeyError: 'kiwi') at crash.py:2 in lookup"), "where and why", text)
        check("  key = 'kiwi' (str)" in text, "the locals are in the same answer", text)
        data = res.structured_content
        check(data["frame"]["line"] == 2 and data["locals_total"] == 2, "the snapshot is structured content too", data)
        await c.call_tool("debug", {"op": "terminate"})
        print(text.splitlines()[0])
    print("ok")


async def debug_crash_js():
    """The same question of a JavaScript program, under js-debug."""
    async with Client(server()) as c:
        res = await c.call_tool("debug", {"op": "launch", "program": "crash.js"})
        text = text_of(res)
        check(not res.is_error, "the launch answers", text)
        check(text.startswith("launched; stopped (exception TypeError: Cannot read properties of undefined (reading 'name')) at crash.js:2 in inner"), "where and why", text)
        check("  user = {id: 1} (Object)" in text, "the locals are in the same answer", text)
        data = res.structured_content
        check(data["frame"]["line"] == 2, "the snapshot is structured content too", data)
        await c.call_tool("debug", {"op": "terminate"})
        print(text.splitlines()[0])
    print("ok")


# The most characters the whole tool list may take (issue #24): each tool
# as the SDK reads it from `tools/list`, its JSON as `json.dumps` writes it.
TOOL_LIST_BUDGET = 7000
EVERY_TOOL = ["apply_patch", "ask_user", "ast_edit", "ast_grep", "debug", "edit", "eval", "lsp", "lsp_edit", "lsp_rename",
              "read", "resolve", "resources", "vibe_kill", "vibe_list", "vibe_send", "vibe_spawn", "vibe_wait", "write"]


async def tool_list_budget():
    async with Client(server("--vibe"), elicitation_callback=answers_nothing()) as c:
        tools = (await c.list_tools()).tools
        sizes = {t.name: len(json.dumps(t.model_dump(mode="json", exclude_none=True))) for t in tools}
        check(sorted(sizes) == EVERY_TOOL, "every tool is registered", sorted(sizes))
        for name, size in sorted(sizes.items(), key=lambda kv: -kv[1]):
            print(f"{name} {size}")
        total = sum(sizes.values())
        print(f"total {total}")
        check(total <= TOOL_LIST_BUDGET, f"the tool list is at most {TOOL_LIST_BUDGET} characters", sizes)
        # What the list leaves out is one call away.
        text = text_of(await c.call_tool("debug", {"op": "help"}))
        for said in ["step_over: One step over.", "hit_condition", "node:test", "vm_service_uri", "Arguments:"]:
            check(said in text, f"debug help says {said}", text)
        text = text_of(await c.call_tool("lsp", {"action": "help"}))
        for said in ["references: Every use", "`offset`", "query"]:
            check(said in text, f"lsp help says {said}", text)
        reference = await c.read_resource("tether://tools/ast_grep")
        text = "".join(c.text for c in reference.contents)
        check("max_results" in text and "$$$X" in text, "the tool's reference is a resource", text)
    print("ok")


SCENARIOS = {
    "tool_list_budget": tool_list_budget,
    "debug_crash": debug_crash,
    "debug_crash_js": debug_crash_js,
    "tools_on_surfaces": tools_on_surfaces,
    "calls_and_content": calls_and_content,
    "cancel_and_progress": cancel_and_progress,
    "ask_user_flows": ask_user_flows,
    "permission_prompts": permission_prompts,
    "stdin_close_stops_children": stdin_close_stops_children,
    "read_only_entry": read_only_entry,
}

if __name__ == "__main__":
    anyio.run(SCENARIOS[SCENARIO])
