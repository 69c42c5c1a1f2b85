"""The jupyter side of the kernel benchmark: start an ipykernel through
jupyter_client, time start-to-first-result and `1+1` round trips, print
JSON. Run by benches/kernel.rs in the same run as tether's measurement."""
import json
import sys
import time

from jupyter_client.manager import start_new_kernel

runs = int(sys.argv[1]) if len(sys.argv) > 1 else 200


def execute(client, code):
    msg_id = client.execute(code)
    result = None
    while True:
        msg = client.get_iopub_msg(timeout=30)
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        if msg["msg_type"] == "execute_result":
            result = msg["content"]["data"]["text/plain"]
        if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
            return result


start = time.perf_counter()
km, client = start_new_kernel(kernel_name="python3")
first = execute(client, "1+1")
cold = time.perf_counter() - start
assert first == "2", first
for _ in range(10):
    execute(client, "1+1")
rtts = []
for _ in range(runs):
    t = time.perf_counter()
    execute(client, "1+1")
    rtts.append(time.perf_counter() - t)
client.stop_channels()
km.shutdown_kernel(now=True)
rtts.sort()
print(json.dumps({"cold_ms": cold * 1e3, "p50_ms": rtts[len(rtts) // 2] * 1e3, "p99_ms": rtts[int(len(rtts) * 0.99)] * 1e3}))
