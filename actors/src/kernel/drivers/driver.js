// tether's JavaScript kernel driver (the parent half).
//
// Speaks JSON lines to the KernelActor on its own stdin/stdout and runs no
// user code itself: cells run in a worker process (worker.js) whose
// stdout/stderr are pipes this driver reads and forwards as ordered output
// events, and whose events (display, tool calls, results) arrive over an
// IPC channel. A cell that writes to fd 1 or spawns a command therefore
// cannot corrupt the protocol. Interrupts are SIGINT to the worker, which
// stops the running script and keeps its context.
'use strict';
const { spawn } = require('child_process');
const readline = require('readline');
const { StringDecoder } = require('string_decoder');

const OUT_HEAD = 64 * 1024;
const OUT_TAIL = 8 * 1024;
const HEARTBEAT_MS = 1000;
// How long a cell's result waits for its output's end markers.
const MARKER_WAIT_MS = 5000;
const WORKER_SOURCE = __WORKER_SOURCE__;

function send(obj) {
  process.stdout.write(JSON.stringify(obj) + '\n');
}

const worker = spawn(process.execPath, ['-e', WORKER_SOURCE], {
  stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  env: process.env,
});

let forwarded = 0;
// Across reads: a character split between two chunks stays whole.
let decoder = new StringDecoder('utf8');
let dropped = 0;
let tail = Buffer.alloc(0);
let lastBeat = 0;
// Markers the worker writes to fds 1 and 2 at the end of a cell, by text:
// each must be seen on both streams before the cell's result goes out.
const MARKER = /\u0000tether-[^\u0000]*\u0000/g;
const markersSeen = new Map();
let pendingDone = null;

function take(chunk) {
  if (!chunk.length) return;
  const room = OUT_HEAD - forwarded;
  if (room > 0) {
    const part = chunk.subarray(0, room);
    forwarded += part.length;
    const text = decoder.write(part);
    if (text) send({ ev: 'out', text });
    chunk = chunk.subarray(room);
  }
  if (chunk.length) {
    dropped += chunk.length;
    tail = Buffer.concat([tail, chunk]).subarray(-OUT_TAIL);
    const now = Date.now();
    if (now - lastBeat > HEARTBEAT_MS) {
      lastBeat = now;
      send({ ev: 'progress' });
    }
  }
}

function onOutput(chunk) {
  const text = chunk.toString('latin1');
  let last = 0;
  for (const m of text.matchAll(MARKER)) {
    take(chunk.subarray(last, m.index));
    markersSeen.set(m[0], (markersSeen.get(m[0]) || 0) + 1);
    last = m.index + m[0].length;
  }
  take(chunk.subarray(last));
  maybeDone();
}

worker.stdout.on('data', onOutput);
worker.stderr.on('data', onOutput);

// The kept tail of the output as text: it was cut by bytes, so a
// character's continuation bytes at its start are not shown as U+FFFD.
function wholeChars(buf) {
  let start = 0;
  while (start < buf.length && start < 3 && buf[start] >= 0x80 && buf[start] < 0xc0) start += 1;
  return buf.subarray(start).toString('utf8');
}

function maybeDone(force) {
  if (pendingDone && (force || (markersSeen.get(pendingDone.marker) || 0) >= 2)) {
    const done = pendingDone;
    pendingDone = null;
    markersSeen.delete(done.marker);
    delete done.marker;
    done.dropped = dropped;
    done.tail = dropped ? wholeChars(tail) : '';
    send(done);
  }
}

worker.on('message', (msg) => {
  if (msg.ev === 'done') {
    // The worker wrote a marker to fds 1 and 2 right before this message;
    // the result goes out once both have been read, so output stays ahead.
    pendingDone = msg;
    // Bounded: a marker that never shows still lets the result go — this
    // cell's result only, never a later cell's before its output is read.
    setTimeout(() => { if (pendingDone === msg) maybeDone(true); }, MARKER_WAIT_MS).unref();
    maybeDone();
    return;
  }
  send(msg);
});

worker.on('exit', (code, signal) => {
  process.stderr.write(`worker exited: ${signal || code}\n`);
  process.exit(signal === 'SIGKILL' ? 137 : code || 1);
});

const rl = readline.createInterface({ input: process.stdin });
rl.on('line', (line) => {
  let msg;
  try { msg = JSON.parse(line); } catch { return; }
  if (msg.op === 'interrupt') {
    worker.kill('SIGINT');
  } else if (msg.op === 'run') {
    forwarded = 0; dropped = 0; tail = Buffer.alloc(0); decoder = new StringDecoder('utf8');
    worker.send(msg);
  } else {
    worker.send(msg);
  }
});
rl.on('close', () => { worker.kill('SIGKILL'); process.exit(0); });

worker.once('message', () => {});
send({ ev: 'ready', pid: process.pid, worker_pid: worker.pid, version: process.version, executable: process.execPath });
