"""Runs `tether ARGS…` on a fresh pseudo-terminal (its controlling
terminal) and types answers when the card's prompt appears.

    python3 pty_answer.py '["answer1", "answer2"]' TETHER ARGS…

Prints one JSON object: everything the terminal showed and the exit code.
"""

import json
import os
import pty
import select
import sys
import time

answers = json.loads(sys.argv[1])
argv = sys.argv[2:]
pid, fd = pty.fork()
if pid == 0:
    os.execv(argv[0], argv)

shown = b""
deadline = time.monotonic() + 60
while time.monotonic() < deadline:
    ready, _, _ = select.select([fd], [], [], 0.1)
    if ready:
        try:
            chunk = os.read(fd, 4096)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        shown += chunk
    # Each prompt ends with "> "; answer the next one once it is shown.
    if answers and shown.rstrip(b" ").endswith(b">"):
        time.sleep(0.1)
        os.write(fd, (answers.pop(0) + "\n").encode())
        shown += b"\n"
_, status = os.waitpid(pid, 0)
print(json.dumps({"shown": shown.decode(errors="replace"), "code": os.waitstatus_to_exitcode(status)}))
