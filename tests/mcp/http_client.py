"""Drives `tether serve --http` with the official MCP Python SDK's
streamable HTTP client (PyPI `mcp`).

    python3 http_client.py SCENARIO URL TOKEN WORKDIR

Each scenario asserts what real clients would see, prints what
`tests/serve_http.rs` checks afterwards, and ends with `ok`.
"""

import json
import os
import re
import sys
import time

import anyio
import httpx2 as httpx
import mcp.types as types
from mcp.client.client import Client
from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client

SCENARIO, URL, TOKEN, WORKDIR = sys.argv[1:5]
AUTH = {"Authorization": f"Bearer {TOKEN}"}


ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def initialize(name):
    """A raw `initialize` request from a client called `name`."""
    return {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": name, "version": "0"}}}


def session(url=URL, name="agent", **kw):
    http = create_mcp_http_client(headers=AUTH)
    info = types.Implementation(name=name, version="1.0")
    return Client(streamable_http_client(url, http_client=http), client_info=info, **kw)


def text_of(result):
    return "\n".join(c.text for c in result.content if isinstance(c, types.TextContent))


def check(cond, what, detail=""):
    if not cond:
        raise AssertionError(f"{what}\n--- detail ---\n{detail}")


async def eight_sessions():
    """Eight agents at once on one warm run: each its own kernel state, one
    shared pyright, a debug session in one not blocking the others."""
    results = {}

    async def agent(i):
        async with session(name=f"agent-{i}") as c:
            r = await c.call_tool("eval", {"code": f"mine = {i} * 100\nimport os\nos.getpid()", "description": f"remember a number for agent {i} here"})
            check(not r.is_error, f"agent {i}: the cell runs", text_of(r))
            pid = int(text_of(r).split("Out: ")[-1].split()[0])
            r = await c.call_tool("lsp", {"action": "definition", "file": "app.py", "line": 3, "symbol": "area"})
            check(not r.is_error and "shapes.py:1:5" in text_of(r), f"agent {i}: pyright answers", text_of(r))
            if i == 0:
                # A debug session stopped at a breakpoint in one session…
                r = await c.call_tool("debug", {"op": "launch", "program": "app.py", "file": "shapes.py", "lines": [2]})
                check("stopped (breakpoint) at shapes.py:2" in text_of(r), "agent 0 stops at its breakpoint", text_of(r))
            r = await c.call_tool("eval", {"code": "mine", "description": f"read back the number of agent {i}"})
            check(text_of(r).strip().endswith(f"Out: {i * 100}"), f"agent {i}: its own kernel state", text_of(r))
            results[i] = pid
            if i == 0:
                await c.call_tool("debug", {"op": "terminate"})

    async with anyio.create_task_group() as tg:
        for i in range(8):
            tg.start_soon(agent, i)
    check(len(set(results.values())) == 8, "eight kernels, one per session", results)
    print("KERNELS " + json.dumps(sorted(results.values())))
    print("ok")


async def session_end_kills_its_kernel():
    async with session(name="short-lived") as c:
        r = await c.call_tool("eval", {"code": "import os\nos.getpid()", "description": "show the process id of this kernel"})
        pid = int(text_of(r).split("Out: ")[-1].split()[0])
        r = await c.call_tool("eval", {"code": "os.environ.get('TETHER_TOKEN', 'absent')", "description": "whether the kernel inherited the run's token"})
        check("'absent'" in text_of(r), "no child of the run inherits the run's token", text_of(r))
        tree = await c.read_resource("tether://tree")
        text = tree.contents[0].text
        check("mcp short-lived 1.0" in text, "the tree shows the session as a conversation named after its client", text)
    # Leaving the client sends DELETE: the session and its conversation end.
    print(f"KERNEL {pid}")
    print("ok")


async def bad_requests():
    async with httpx.AsyncClient(timeout=10) as h:
        init = initialize("raw")
        r = await h.post(URL, json=init, headers=ACCEPT)
        check(r.status_code == 401 and r.text == "", "no token: 401, nothing else said", (r.status_code, r.text))
        r = await h.post(URL, json=init, headers={**ACCEPT, "Authorization": "Bearer wrong-token-wrong-token"})
        check(r.status_code == 401, "a wrong token: 401", r.status_code)
        r = await h.post(URL, json=init, headers={**ACCEPT, **AUTH, "Origin": "http://evil.example"})
        check(r.status_code == 403, "a foreign Origin: 403", (r.status_code, r.text))
        r = await h.post(URL, json=init, headers={**ACCEPT, **AUTH, "Host": "evil.example"})
        check(r.status_code == 403, "a foreign Host: 403 (DNS rebinding)", (r.status_code, r.text))
        r = await h.post(URL, content=b"{not json", headers={**ACCEPT, **AUTH})
        check(400 <= r.status_code < 500, "a malformed body: a 4xx", (r.status_code, r.text))
        r = await h.post(URL, json=init, headers={**AUTH, "Content-Type": "text/plain", "Accept": "application/json, text/event-stream"})
        check(400 <= r.status_code < 500, "a wrong content type: a 4xx", (r.status_code, r.text))
        r = await h.post(URL, json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, headers={**ACCEPT, **AUTH, "Mcp-Session-Id": "no-such-session"})
        check(r.status_code == 404, "an unknown session: 404", (r.status_code, r.text))
        big = {"jsonrpc": "2.0", "id": 3, "method": "ping", "params": {"pad": "x" * (17 * 1024 * 1024)}}
        r = await h.post(URL, json=big, headers={**ACCEPT, **AUTH})
        check(r.status_code == 413, "an oversized body: 413", (r.status_code, r.text[:200]))
        error = r.json().get("error", {})
        check(error.get("code") == -32600 and "at most 16 MiB" in error.get("message", ""),
              "answered as a JSON-RPC error a client shows", r.text[:300])
        r = await h.post(URL.replace("/mcp", "/other"), json=init, headers={**ACCEPT, **AUTH})
        check(r.status_code == 404, "another path: 404", r.status_code)
    # …and the run still serves a session, where a call whose argument is
    # over 4 MiB is refused as over stdio, naming the field.
    async with session(name="after") as c:
        names = [t.name for t in (await c.list_tools()).tools]
        check("eval" in names, "the run keeps serving", names)
        r = await c.call_tool("write", {"path": "huge.txt", "content": "x" * (5 * 1024 * 1024)})
        check(r.is_error and "argument `content` holds 5.0 MiB" in text_of(r) and "at most 4.0 MiB" in text_of(r),
              "a 5 MiB argument: the router's refusal naming the field", text_of(r)[:300])
    async with session(URL + "?surface=read-only", name="planner") as c:
        names = {t.name for t in (await c.list_tools()).tools}
        check(names and not names & {"eval", "debug", "write", "edit"}, "a read-only session lists read tools only", names)
        r = await c.call_tool("eval", {"code": "1", "description": "try to run a cell from plan mode"})
        check(r.is_error, "and cannot call the others", text_of(r))
    print("ok")


async def slowly(body):
    half = len(body) // 2
    yield body[:half]
    await anyio.sleep(0.05)
    yield body[half:]


async def bad_requests_at_once():
    """Sixteen clients at once, each sending every kind of malformed request
    over its own keep-alive connection, round after round: each gets its
    error, and none a dropped connection."""
    init = initialize("raw")
    big = {"jsonrpc": "2.0", "id": 3, "method": "ping", "params": {"pad": "x" * (17 * 1024 * 1024)}}
    kinds = [
        ("no token", dict(json=init, headers=ACCEPT), {401}),
        ("a wrong token", dict(json=init, headers={**ACCEPT, "Authorization": "Bearer wrong-token-wrong-token"}), {401}),
        ("a foreign Origin", dict(json=init, headers={**ACCEPT, **AUTH, "Origin": "http://evil.example"}), {403}),
        ("a foreign Host", dict(json=init, headers={**ACCEPT, **AUTH, "Host": "evil.example"}), {403}),
        ("a malformed body", dict(content=b"{not json", headers={**ACCEPT, **AUTH}), set(range(400, 500))),
        ("a wrong content type", dict(json=init, headers={**AUTH, "Content-Type": "text/plain",
                                                         "Accept": "application/json, text/event-stream"}), set(range(400, 500))),
        ("an unknown session", dict(json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
                                    headers={**ACCEPT, **AUTH, "Mcp-Session-Id": "no-such-session"}), {404}),
        ("another path", dict(json=init, headers={**ACCEPT, **AUTH}, url=URL.replace("/mcp", "/other")), {404}),
    ]
    failures = []
    answered = [0]

    async def client(n):
        async with httpx.AsyncClient(timeout=60) as h:
            for round in range(6):
                for what, kw, expected in kinds + ([("an oversized body", dict(json=big, headers={**ACCEPT, **AUTH}), {413})]
                                                   if (n + round) % 4 == 0 else []):
                    kw = dict(kw)
                    url = kw.pop("url", URL)
                    if round % 2 == 1 and "json" in kw:
                        # The body in two pieces, the second a moment after
                        # the headers: the answer may come before it arrives.
                        body = json.dumps(kw.pop("json")).encode()
                        kw["content"] = slowly(body)
                    try:
                        r = await h.post(url, **kw)
                    except Exception as e:  # a dropped connection is what this looks for
                        failures.append(f"client {n}, round {round}, {what}: {type(e).__name__}: {e}")
                        continue
                    answered[0] += 1
                    if r.status_code not in expected:
                        failures.append(f"client {n}, round {round}, {what}: {r.status_code} {r.text[:200]}")

    async with anyio.create_task_group() as tg:
        for n in range(16):
            tg.start_soon(client, n)
    check(not failures, f"{len(failures)} of the malformed requests got no error of their own", "\n".join(failures[:20]))
    print(f"ANSWERED {answered[0]}")
    print("ok")


async def questions_go_to_their_own_session():
    """Each session's ask_user and permission cards reach that session's
    client, never another's."""
    question = {"question": "Which store should the cache use?", "options": [{"label": "sqlite"}, {"label": "postgres"}]}
    seen = {"a": [], "b": []}
    answered_at, done_at = {}, {}

    def answering(who, choice, delay):
        async def callback(context, params):
            seen[who].append(params.message)
            await anyio.sleep(delay)
            answered_at[who] = time.monotonic()
            return types.ElicitResult(action="accept", content={"choice": choice})
        return callback

    answers = {}

    async def ask(who, choice, delay):
        async with session(name=f"asker-{who}", elicitation_callback=answering(who, choice, delay)) as c:
            r = await c.call_tool("ask_user", question)
            done_at[who] = time.monotonic()
            answers[who] = text_of(r)

    # a's human is slow; b's card is not held up behind a's.
    async with anyio.create_task_group() as tg:
        tg.start_soon(ask, "a", "sqlite", 4)
        await anyio.sleep(0.5)
        tg.start_soon(ask, "b", "postgres", 0)
    check(done_at["b"] < answered_at["a"], "one session's open card does not hold up another's", (done_at, answered_at))
    check("chose option 1. sqlite" in answers["a"], "session a got its own client's answer", answers)
    check("chose option 2. postgres" in answers["b"], "session b got its own client's answer", answers)
    check(len(seen["a"]) == 1 and len(seen["b"]) == 1, "each client was asked once, only its own question", seen)
    async with session(name="mute") as c:  # declares no elicitation
        names = [t.name for t in (await c.list_tools()).tools]
        check("ask_user" not in names and "lsp" in names, "a mute session is not offered ask_user", names)
        r = await c.call_tool("ask_user", question)
        check(r.is_error and "elicitation" in text_of(r), "a client that cannot show a form is told why", text_of(r))
    print("ok")


async def sessions_cannot_touch_each_other():
    async with session(name="owner") as a, session(name="intruder") as b:
        r = await a.call_tool("ast_edit", {"pattern": "area($W, $H)", "rewrite": "area($H, $W)"})
        check(not r.is_error and "edit_id" in text_of(r), "the owner stages an edit", text_of(r))
        edit_id = text_of(r).split('edit_id "')[1].split('"')[0]
        r = await b.call_tool("resolve", {"edit_id": edit_id, "action": "accept"})
        check(r.is_error and "staged by another conversation" in text_of(r), "another session cannot resolve it", text_of(r))
        r = await a.call_tool("eval", {"code": "secret = 'owner only'\nsecret", "description": "keep a value only this session should see"})
        check("owner only" in text_of(r), "the owner's kernel holds it", text_of(r))
        r = await b.call_tool("eval", {"code": "secret", "description": "try to read the other session's value"})
        check(r.is_error or "NameError" in text_of(r), "another session's kernel does not have it", text_of(r))
        r = await a.call_tool("debug", {"op": "launch", "program": "app.py", "file": "shapes.py", "lines": [2]})
        check("stopped (breakpoint) at shapes.py:2" in text_of(r), "the owner debugs", text_of(r))
        r = await b.call_tool("debug", {"op": "stack"})
        check(r.is_error and "no debug session is running" in text_of(r), "another session cannot drive it", text_of(r))
        r = await b.call_tool("debug", {"op": "terminate"})
        r = await a.call_tool("debug", {"op": "status"})
        check("stopped (breakpoint)" in text_of(r), "the owner's session is untouched", text_of(r))
        await a.call_tool("debug", {"op": "terminate"})
        r = await a.call_tool("resolve", {"edit_id": edit_id, "action": "discard"})
        check(not r.is_error, "the owner resolves its own edit", text_of(r))
    print("ok")


async def no_session_loses_anothers_edit():
    """Two sessions on one run: A reads, B edits, A writes its own version.
    A is refused and told by whom; B's edit stays; A's next answer names
    the change."""
    async with session(name="A") as a, session(name="B") as b:
        r = await a.call_tool("read", {"path": "shapes.py"})
        check(not r.is_error, "A reads", text_of(r))
        original = text_of(r)
        r = await b.call_tool("read", {"path": "shapes.py"})
        r = await b.call_tool("write", {"path": "shapes.py", "content": original + "# B was here\n"})
        check(not r.is_error, "B replaces what it read", text_of(r))
        r = await a.call_tool("write", {"path": "shapes.py", "content": "# A's version\n"})
        check(r.is_error and "changed since you read it at" in text_of(r)
              and re.search(r"\(by conversation mcp B 1\.0 #\d+\)", text_of(r)),
              "A's write over B's is refused, naming B's session", text_of(r))
        with open(os.path.join(WORKDIR, "shapes.py")) as f:
            check(f.read().endswith("# B was here\n"), "B's edit is not lost")
        r = await a.call_tool("read", {"path": "shapes.py"})
        check("# B was here" in text_of(r), "A reads again and sees B's work", text_of(r))
        r = await a.call_tool("write", {"path": "shapes.py", "content": text_of(r).split("\nnote: ")[0]})
        check(not r.is_error, "then A's write lands", text_of(r))
    print("ok")


async def a_worker_reaches_the_warm_run():
    """A vibe worker that is itself an MCP client connects to the same run
    with the URL and token it was given, and gets the warm answer."""
    async with session(name="lead") as c:
        r = await c.call_tool("lsp", {"action": "definition", "file": "app.py", "line": 3, "symbol": "area"})
        check("shapes.py:1:5" in text_of(r), "the lead's answer", text_of(r))
        r = await c.call_tool("vibe_spawn", {"brief": "find where area is defined", "label": "find area", "tier": "fast"})
        check(not r.is_error, "the worker starts", text_of(r))
        worker = r.structured_content["id"]
        r = await c.call_tool("vibe_wait", {"worker_id": worker, "timeout_seconds": 60})
        text = text_of(r)
        check("WORKER-ANSWER" in text and "shapes.py:1:5" in text, "the worker got the warm answer through the run", text)
        check("TOKEN-IS-NOT-THE-RUNS" in text, "the worker holds a token of its own", text)
    # The worker's run is over: its token opens nothing any more.
    with open(os.path.join(WORKDIR, "worker_token.txt")) as f:
        worker_token = f.read().strip()
    init = initialize("late")
    async with httpx.AsyncClient(timeout=10) as h:
        r = await h.post(URL, json=init, headers={**ACCEPT, "Authorization": f"Bearer {worker_token}"})
        check(r.status_code == 401, "a finished worker's token is refused", f"{r.status_code} {r.text}")
    print("ok")


async def limits():
    """Past each limit a clear refusal, and nothing already running is
    disturbed."""
    async with session(name="busy") as c:
        # MAX_CALLS_IN_FLIGHT (16) slow calls run; the 17th is refused at once.
        results = []

        async def slow(i):
            r = await c.call_tool("eval", {"code": "import time\ntime.sleep(1.5)\n'done'", "description": f"sleep a moment and a half in slow call {i}"})
            results.append(text_of(r))

        async with anyio.create_task_group() as tg:
            for i in range(16):
                tg.start_soon(slow, i)
            await anyio.sleep(0.8)
            r = await c.call_tool("lsp", {"action": "status"})
            check(r.is_error and "already has 16 calls running" in text_of(r), "the 17th call is refused", text_of(r))
        check(len(results) == 16 and all("done" in t for t in results), "the 16 running calls finish untouched", results)
    # Sessions opened all at once, each body slow to arrive (a session is
    # made only once its initialize is read): still at most MAX_SESSIONS.
    body = json.dumps(initialize("many")).encode()
    answers = []

    async def open_one(h):
        async def slowly():
            yield body[:10]
            await anyio.sleep(0.5)
            yield body[10:]
        r = await h.post(URL, content=slowly(), headers={**ACCEPT, **AUTH})
        answers.append((r.status_code, r.text if r.status_code != 200 else ""))

    async with httpx.AsyncClient(timeout=30, limits=httpx.Limits(max_connections=100)) as h:
        async with anyio.create_task_group() as tg:
            for _ in range(80):
                tg.start_soon(open_one, h)
    opened = sum(1 for code, _ in answers if code == 200)
    refused = [text for code, text in answers if code != 200]
    check(opened <= 64, "at most MAX_SESSIONS sessions open, however many ask at once", opened)
    check(opened >= 60, "sessions up to the limit open", opened)
    check(refused and all("64 sessions are open" in t for t in refused), "the rest are refused with why", refused[:3])
    print("ok")


async def over_a_unix_socket():
    """URL is `unix:PATH`: the same MCP, on a socket only its owner reaches."""
    path = URL.removeprefix("unix:")
    check(oct(os.stat(path).st_mode & 0o777) == "0o600", "the socket is the owner's only", oct(os.stat(path).st_mode))
    http = httpx.AsyncClient(transport=httpx.AsyncHTTPTransport(uds=path), headers=AUTH, timeout=30)
    async with Client(streamable_http_client("http://localhost/mcp", http_client=http)) as c:
        r = await c.call_tool("lsp", {"action": "definition", "file": "app.py", "line": 3, "symbol": "area"})
        check("shapes.py:1:5" in text_of(r), "a call over the socket", text_of(r))
    print("ok")


async def an_idle_session_ends():
    """The server runs with --session-idle 2: a session idle past it ends,
    its kernel with it, though its client still holds the connection."""
    async with session(name="sleepy") as c:
        r = await c.call_tool("eval", {"code": "import os\nos.getpid()", "description": "show the process id of this kernel"})
        pid = int(text_of(r).split("Out: ")[-1].split()[0])
        print(f"KERNEL {pid}", flush=True)
        # A call that runs past the idle limit, sending nothing meanwhile,
        # is not idleness: it answers, and the session goes on.
        r = await c.call_tool("eval", {"code": "import time\ntime.sleep(5)\n'slept'", "description": "sleep past the idle limit"})
        check("slept" in text_of(r), "a call longer than the idle limit answers", text_of(r))
        r = await c.call_tool("eval", {"code": "os.getpid()", "description": "the same kernel after the long call"})
        check(str(pid) in text_of(r), "the session and its kernel outlived the long call", text_of(r))
        await anyio.sleep(5)
        try:
            r = await c.call_tool("lsp", {"action": "status"})
            ended = r.is_error
            detail = text_of(r)
        except Exception as e:  # the session is gone: the client is told so
            ended, detail = True, repr(e)
        check(ended, "a call on a session that idled out is refused", detail)
    print("ok")


SCENARIOS = {
    "an_idle_session_ends": an_idle_session_ends,
    "over_a_unix_socket": over_a_unix_socket,
    "limits": limits,
    "a_worker_reaches_the_warm_run": a_worker_reaches_the_warm_run,
    "sessions_cannot_touch_each_other": sessions_cannot_touch_each_other,
    "no_session_loses_anothers_edit": no_session_loses_anothers_edit,
    "questions_go_to_their_own_session": questions_go_to_their_own_session,
    "eight_sessions": eight_sessions,
    "session_end_kills_its_kernel": session_end_kills_its_kernel,
    "bad_requests": bad_requests,
    "bad_requests_at_once": bad_requests_at_once,
}

if __name__ == "__main__":
    anyio.run(SCENARIOS[SCENARIO])
