"""A loopback proxy that adds `Authorization: Bearer TOKEN` to every request
it forwards, for clients that cannot send one (the MCP conformance suite).

    python3 auth_proxy.py LISTEN_PORT UPSTREAM_PORT TOKEN

Every other header — `Host` and `Origin` included, which the DNS-rebinding
scenario checks — goes through unchanged. Each request is forwarded on a
fresh upstream connection with `Connection: close`, and the response is
piped back until the upstream closes, so streamed (SSE) answers pass as
they come.
"""

import asyncio
import sys

LISTEN, UPSTREAM, TOKEN = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]


async def read_head(reader):
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head[:-4].split(b"\r\n")
    return lines[0], lines[1:]


async def pipe(reader, writer):
    try:
        while chunk := await reader.read(65536):
            writer.write(chunk)
            await writer.drain()
    except (ConnectionError, asyncio.IncompleteReadError):
        pass
    finally:
        writer.close()


async def handle(client_r, client_w):
    try:
        start, headers = await read_head(client_r)
    except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError):
        client_w.close()
        return
    kept = [h for h in headers if not h.lower().startswith((b"connection:", b"authorization:", b"keep-alive:"))]
    length = 0
    for h in headers:
        if h.lower().startswith(b"content-length:"):
            length = int(h.split(b":", 1)[1].strip())
    body = await client_r.readexactly(length) if length else b""
    up_r, up_w = await asyncio.open_connection("127.0.0.1", UPSTREAM)
    head = [start, *kept, b"Authorization: Bearer " + TOKEN.encode(), b"Connection: close"]
    up_w.write(b"\r\n".join(head) + b"\r\n\r\n" + body)
    await up_w.drain()
    await pipe(up_r, client_w)
    up_w.close()


async def main():
    server = await asyncio.start_server(handle, "127.0.0.1", LISTEN)
    print("proxy ready", flush=True)
    async with server:
        await server.serve_forever()


asyncio.run(main())
