"""The MCP callers of tests/hunt.rs: several sessions of one
`tether serve --http` run and parallel calls in one `tether serve` stdio
session, all through the official MCP Python SDK (PyPI `mcp`).

    python3 hunt_callers.py URL TOKEN TETHER WORKDIR SESSIONS PARALLEL [CALL_BOUND_S]

Prints `ready` once every session is initialised. Then, for each line on
stdin — one call, `{"round": N, "tool": ..., "args": {...}}` — makes that
call from every HTTP session once and from the stdio session PARALLEL
times, all at once, and prints one line: `{"round": N, "answers": [{"who",
"text", "is_error", "ms"}]}`. Ends when stdin closes.
"""

import json
import sys
import time
from contextlib import AsyncExitStack

import anyio
import mcp.types as types
from mcp import StdioServerParameters
from mcp.client.client import Client
from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client

URL, TOKEN, TETHER, WORKDIR = sys.argv[1:5]
SESSIONS, PARALLEL = int(sys.argv[5]), int(sys.argv[6])
# Longer than every bounded wait inside tether added up (the caller passes
# it): a call that takes this long hangs.
CALL_BOUND_S = float(sys.argv[7]) if len(sys.argv) > 7 else 450


def text_of(result):
    return "\n".join(c.text for c in result.content if isinstance(c, types.TextContent))


async def one(who, client, tool, args, answers):
    started = time.monotonic()
    try:
        with anyio.fail_after(CALL_BOUND_S):
            r = await client.call_tool(tool, args)
        answers.append({"who": who, "text": text_of(r), "is_error": bool(r.is_error),
                        "ms": (time.monotonic() - started) * 1000})
    except Exception as e:  # a transport failure or a hang is an answer the checker must see
        answers.append({"who": who, "text": f"client failure: {type(e).__name__}: {e}", "is_error": True,
                        "ms": (time.monotonic() - started) * 1000, "failure": True})


async def main():
    async with AsyncExitStack() as stack:
        clients = []
        for i in range(SESSIONS):
            http = create_mcp_http_client(headers={"Authorization": f"Bearer {TOKEN}"})
            info = types.Implementation(name=f"hunt-http-{i}", version="1")
            c = await stack.enter_async_context(Client(streamable_http_client(URL, http_client=http), client_info=info))
            clients.append((f"http-{i}", c))
        stdio = await stack.enter_async_context(
            Client(StdioServerParameters(command=TETHER, args=["serve", "--trusted", "--workdir", WORKDIR])))
        clients += [(f"stdio-{k}", stdio) for k in range(PARALLEL)]
        print("ready", flush=True)
        while True:
            line = await anyio.to_thread.run_sync(sys.stdin.readline)
            if not line:
                return
            call = json.loads(line)
            answers = []
            async with anyio.create_task_group() as tg:
                for who, c in clients:
                    tg.start_soon(one, who, c, call["tool"], call["args"], answers)
            print(json.dumps({"round": call["round"], "answers": answers}), flush=True)


anyio.run(main)
