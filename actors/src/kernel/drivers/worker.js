// tether's JavaScript kernel worker: runs cells in one persistent vm
// context. Receives run/tool_result over IPC; sends display, tool, done.
'use strict';
const vm = require('vm');
const util = require('util');
const path = require('path');
const { createRequire } = require('module');

const ECHO_MAX = 16 * 1024;
let cellNo = 0;
let nextTool = 0;
const toolWaiters = new Map();
let interruptCurrent = null;

// Echoes, error messages and tracebacks are passed on up to ECHO_MAX
// characters; the rest is counted.
function clip(text) {
  return text.length > ECHO_MAX ? `${text.slice(0, ECHO_MAX)}… (${text.length - ECHO_MAX} more characters cut)` : text;
}

function inspect(value) {
  return clip(typeof value === 'string' ? util.inspect(value) : util.inspect(value, { depth: 4, maxArrayLength: 100, breakLength: 100 }));
}

function display(...values) {
  for (const v of values) process.send({ ev: 'display', text: typeof v === 'string' ? v : inspect(v), html: null, png: null });
}

function tool(name, args) {
  const id = ++nextTool;
  return new Promise((resolve, reject) => {
    toolWaiters.set(id, { resolve, reject });
    process.send({ ev: 'tool', id, name, args: args || {} });
  });
}

const sandbox = {
  console, process, Buffer, URL, URLSearchParams, TextEncoder, TextDecoder, AbortController,
  setTimeout, clearTimeout, setInterval, clearInterval, setImmediate, clearImmediate, queueMicrotask,
  structuredClone, fetch: globalThis.fetch, display, tool,
  require: createRequire(path.join(process.cwd(), '__tether_cell__.js')),
};
const context = vm.createContext(sandbox);

// `await import("pkg")` in a cell: modules load through the main
// context's own loader (ES-module packages too), resolved from the
// working directory. Node 20 marks the constant experimental and warns on
// stderr the first time: that one warning is not the cell's output.
const importModuleDynamically = vm.constants && vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER;
const emitWarning = process.emitWarning;
process.emitWarning = function (warning, ...rest) {
  if (String((warning && warning.message) || warning).includes('USE_MAIN_CONTEXT_DEFAULT_LOADER')) return;
  return emitWarning.call(process, warning, ...rest);
};

// A promise rejected with nothing to handle it would end the process
// (Node's default): it is the error of the cell that made it instead, and
// one that comes after its cell ended is said with the next cell.
let rejections = [];
process.on('unhandledRejection', (reason) => { rejections.push(reason); });

// Top-level declarations, at column 0 outside strings and comments, are
// made re-runnable (`var`), or global when the cell is wrapped for await.
function declarations(code, wrapped) {
  const lines = code.split('\n');
  let inTemplate = false;
  let inComment = false;
  return lines.map((line) => {
    const startsInside = inTemplate || inComment;
    for (let i = 0; i < line.length; i++) {
      const c = line[i];
      if (inComment) { if (line.startsWith('*/', i)) { inComment = false; i++; } continue; }
      if (inTemplate) { if (c === '\\') { i++; continue; } if (c === '`') inTemplate = false; continue; }
      if (line.startsWith('//', i)) break;
      if (line.startsWith('/*', i)) { inComment = true; i++; continue; }
      if (c === '`') inTemplate = true;
      else if (c === '"' || c === "'") { const end = line.indexOf(c, i + 1); i = end < 0 ? line.length : end; }
    }
    if (startsInside) return line;
    if (wrapped) {
      return line
        .replace(/^(?:let|const|var)\s+([A-Za-z_$][\w$]*)\s*=/, 'globalThis.$1 =')
        .replace(/^(async\s+)?function\s*(\*?)\s*([A-Za-z_$][\w$]*)\s*\(/, 'globalThis.$3 = $1function$2 $3(')
        .replace(/^class\s+([A-Za-z_$][\w$]*)/, 'globalThis.$1 = class $1');
    }
    return line.replace(/^(?:let|const)\s+(?=[A-Za-z_${[])/, 'var ');
  }).join('\n');
}

function compileCell(code, filename) {
  const plain = declarations(code, false);
  try {
    return { script: new vm.Script(plain, { filename, importModuleDynamically }), async: false };
  } catch (e) {
    if (!(e instanceof SyntaxError) || !/await/.test(code)) throw e;
  }
  // Top-level await: wrap in an async function, returning the last line
  // when it is an expression.
  const body = declarations(code, true).replace(/\s+$/, '');
  const lines = body.split('\n');
  const last = lines[lines.length - 1].replace(/;\s*$/, '');
  const head = lines.slice(0, -1).join('\n');
  const candidates = [
    `(async () => {\n${head}\nreturn (${last});\n})()`,
    `(async () => {\n${body}\n})()`,
  ];
  let lastError;
  for (const src of candidates) {
    try { return { script: new vm.Script(src, { filename, lineOffset: -1, importModuleDynamically }), async: true }; } catch (e) { lastError = e; }
  }
  throw lastError;
}

function errorInfo(e, filename) {
  // Errors thrown in the context come from another realm: no instanceof.
  if (!e || typeof e !== 'object') return { type: typeof e, message: clip(String(e)), traceback: clip(String(e)) };
  const stack = String(e.stack || e);
  const kept = stack.split('\n').filter((l, i) => i === 0 || l.includes(filename));
  return { type: e.name || 'Error', message: clip(e.message || String(e)), traceback: clip(kept.join('\n')) };
}

function rejectionNote(reason, when) {
  const info = errorInfo(reason, '');
  return `${when}, a promise was rejected and nothing handled it: ${info.type}: ${info.message}; the interpreter is kept`;
}

async function runCell(msg) {
  const filename = `cell ${++cellNo}`;
  const notes = rejections.splice(0).map((r) => rejectionNote(r, `after cell ${cellNo - 1} ended`));
  let result;
  try {
    const { script, async } = compileCell(msg.code || '', filename);
    let value = script.runInContext(context, { breakOnSigint: true, displayErrors: false });
    if (async) {
      value = await new Promise((resolve, reject) => {
        interruptCurrent = () => reject(Object.assign(new Error('Script execution interrupted.'), { name: 'Interrupted' }));
        Promise.resolve(value).then(resolve, reject);
      });
    }
    result = { status: 'ok', echo: value === undefined ? null : inspect(value) };
  } catch (e) {
    const interrupted = !!e && (e.name === 'Interrupted' || /Script execution (was )?interrupted/.test(String(e.message)));
    result = { status: interrupted ? 'interrupted' : 'error', error: errorInfo(e, filename) };
  } finally {
    interruptCurrent = null;
  }
  // Node tells of a rejection nothing handled once the microtasks of the
  // turn that made it have run: a turn later, this cell's are all known.
  await new Promise((resolve) => setImmediate(resolve));
  const mine = rejections.splice(0);
  if (mine.length && result.status === 'ok') {
    const error = errorInfo(mine.shift(), filename);
    error.traceback = `Uncaught (in promise) ${error.traceback}`;
    result = { status: 'error', echo: result.echo, error };
    notes.push('a promise was rejected while the cell ran and nothing handled it; the interpreter and its state are kept');
  }
  for (const r of mine) notes.push(rejectionNote(r, 'during the cell'));
  if (notes.length) result.notes = notes;
  const marker = `\u0000tether-${process.pid}-${cellNo}-${Date.now()}\u0000`;
  require('fs').writeSync(1, marker);
  require('fs').writeSync(2, marker);
  process.send({ ev: 'done', id: msg.id, marker, ...result });
}

process.on('SIGINT', () => { if (interruptCurrent) interruptCurrent(); });

let queue = Promise.resolve();
process.on('message', (msg) => {
  if (msg.op === 'tool_result') {
    const waiter = toolWaiters.get(msg.id);
    if (!waiter) return;
    toolWaiters.delete(msg.id);
    if (msg.is_error) waiter.reject(Object.assign(new Error(msg.text), { name: 'ToolError' }));
    else waiter.resolve({ text: msg.text, data: msg.data, toString() { return msg.text; } });
  } else if (msg.op === 'run') {
    queue = queue.then(() => runCell(msg));
  }
});
