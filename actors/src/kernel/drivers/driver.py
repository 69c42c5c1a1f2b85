"""tether's Python kernel driver.

Speaks JSON lines to the KernelActor on the process's original stdin and
stdout, which it moves aside before any user code runs: fd 0 becomes
/dev/null and fds 1 and 2 become one pipe that a thread reads and forwards
as ordered output events. So a cell that prints, writes to fd 1, or runs
`!ls` cannot corrupt the protocol. Commands: run, interrupt, tool_result.
"""
import ast
import base64
import codecs
import io
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import threading
import time
import traceback
import warnings

OUT_HEAD = 64 * 1024   # output bytes forwarded per cell
OUT_TAIL = 8 * 1024    # bytes kept from the end once the head is full
ECHO_MAX = 16 * 1024   # longest echoed value
FOOTER_MAX = 1024      # longest last line an echo keeps past its cut (a footer, not a value)
HEARTBEAT = 1.0        # seconds between progress events while output is dropped

# --- move the protocol aside -------------------------------------------------
_proto_in = os.fdopen(os.dup(0), "rb")
_proto_out = os.dup(1)
_devnull = os.open(os.devnull, os.O_RDONLY)
os.dup2(_devnull, 0)
_real_err = os.dup(2)  # the kernel's own stderr, which tether keeps the tail of
_out_r, _out_w = os.pipe()
os.dup2(_out_w, 1)
os.dup2(_out_w, 2)
os.close(_out_w)
for _fd in (_proto_in.fileno(), _proto_out, _out_r, _real_err):
    os.set_inheritable(_fd, False)
# A crash in C code (a segfault in an extension) says where, on the real
# stderr: the death report quotes it.
import faulthandler
_crash_log = os.fdopen(_real_err, "w", buffering=1)
faulthandler.enable(file=_crash_log)
sys.stdin = open(os.devnull)
sys.stdout = open(1, "w", buffering=1, closefd=False, errors="replace")
sys.stderr = open(2, "w", buffering=1, closefd=False, errors="replace")
os.environ["MPLBACKEND"] = "Agg"  # forced: figures are rendered to PNG

_send_lock = threading.Lock()
# A process a cell forks carries this driver on; it must never speak for
# the kernel (its `done` would be taken for the next cell's answer).
_KERNEL_PID = os.getpid()


def send(obj):
    if os.getpid() != _KERNEL_PID:
        return
    data = (json.dumps(obj, default=str) + "\n").encode()
    with _send_lock:
        view = memoryview(data)
        while view:
            n = os.write(_proto_out, view)
            view = view[n:]


def _clip(text, limit=ECHO_MAX):
    """Echoes, error messages and tracebacks go out up to `limit`
    characters; the rest is counted."""
    if len(text) <= limit:
        return text
    return text[:limit] + "… (%d more characters cut)" % (len(text) - limit)


def _clip_shown(text, limit=ECHO_MAX):
    """An echo or a display's text up to `limit` characters, keeping its
    last line: a DataFrame's "[N rows x M columns]" or a Series' "Name: …,
    dtype: …" is there, and a cut table must never read as the whole
    table. The lines cut between are counted."""
    if len(text) <= limit:
        return text
    head, newline, last = text.rpartition("\n")
    if not newline or len(last) > FOOTER_MAX:
        return _clip(text, limit)  # one long line, or a last line that is data
    kept = head[:max(0, limit - len(last))]
    whole = kept.rfind("\n")
    if whole > 0:
        kept = kept[:whole]  # whole lines only
    cut = head[len(kept):]
    lines = cut.count("\n") + (0 if cut.startswith("\n") else 1)
    return "%s\n… (%d line%s cut here, %d characters; the last line follows)\n%s" % (
        kept, lines, "" if lines == 1 else "s", len(cut), last)


def _whole_chars(tail):
    """The kept tail of the output as text: it was cut by bytes, so a
    character's continuation bytes at its start are not shown as U+FFFD."""
    start = 0
    while start < len(tail) and start < 3 and 0x80 <= tail[start] < 0xC0:
        start += 1
    return tail[start:].decode("utf-8", "replace")


# --- output capture ------------------------------------------------------------
class Capture:
    def __init__(self):
        self.cond = threading.Condition()
        self.reset(None)

    def reset(self, marker):
        self.marker = marker
        self.forwarded = 0
        self.dropped = 0
        self.tail = b""
        self.seen_marker = False
        self.last_beat = 0.0
        # Across reads: a character split between two chunks stays whole.
        self.decoder = codecs.getincrementaldecoder("utf-8")("replace")

    def feed(self, chunk):
        with self.cond:
            if self.marker is not None and self.marker in chunk:
                before, _, _ = chunk.partition(self.marker)
                self._take(before)
                self.seen_marker = True
                self.cond.notify_all()
                return
            self._take(chunk)

    def _take(self, chunk):
        if not chunk:
            return
        room = OUT_HEAD - self.forwarded
        if room > 0:
            part = chunk[:room]
            self.forwarded += len(part)
            text = self.decoder.decode(part)
            if text:
                send({"ev": "out", "text": text})
            chunk = chunk[room:]
        if chunk:
            self.dropped += len(chunk)
            self.tail = (self.tail + chunk)[-OUT_TAIL:]
            now = time.monotonic()
            if now - self.last_beat > HEARTBEAT:
                self.last_beat = now
                send({"ev": "progress"})


_capture = Capture()


def _reader():
    pending = b""
    while True:
        chunk = os.read(_out_r, 65536)
        if not chunk:
            return
        # Keep a possible partial marker at the end for the next read.
        data = pending + chunk
        keep = 64
        if _capture.marker is not None and _capture.marker not in data and len(data) > keep:
            pending = data[-keep:]
            data = data[:-keep]
        else:
            pending = b""
        _capture.feed(data)


threading.Thread(target=_reader, daemon=True).start()


def drain():
    """Waits until everything written to fds 1/2 so far has been read."""
    sys.stdout.flush()
    sys.stderr.flush()
    marker = ("\x00tether-%d-%f\x00" % (os.getpid(), time.time())).encode()
    with _capture.cond:
        _capture.marker = marker
        _capture.seen_marker = False
    os.write(1, marker)
    with _capture.cond:
        _capture.cond.wait_for(lambda: _capture.seen_marker, timeout=5)
        _capture.marker = None


# --- the bridge ------------------------------------------------------------------
class ToolError(Exception):
    """A tool called through tool() reported an error."""


class ToolText(str):
    """A tool's text result; `.data` holds its structured form."""
    data = None


_bridge_lock = threading.Lock()
_bridge_waiters = {}
_bridge_next = [0]


def tool(name, args=None):
    """Calls one of the host's tools, with this cell's surface and approval."""
    with _bridge_lock:
        _bridge_next[0] += 1
        rid = _bridge_next[0]
        event = threading.Event()
        _bridge_waiters[rid] = [event, None]
    send({"ev": "tool", "id": rid, "name": name, "args": args or {}})
    while not event.wait(0.1):
        pass
    with _bridge_lock:
        _, answer = _bridge_waiters.pop(rid)
    if answer.get("is_error"):
        raise ToolError(answer.get("text", ""))
    text = ToolText(answer.get("text", ""))
    text.data = answer.get("data")
    return text


# --- rich display --------------------------------------------------------------------
def _figure_png(fig):
    buf = io.BytesIO()
    fig.savefig(buf, format="png", bbox_inches="tight")
    return base64.b64encode(buf.getvalue()).decode()


def _lines(text):
    """A repr as IPython's formatter prints one: split into lines and
    joined again with "\\n" (no trailing newline, \\r\\n and the other
    separators str.splitlines knows made "\\n")."""
    return "\n".join(text.splitlines())


# Modules whose values IPython's formatter prints as their plain repr (no
# _repr_pretty_, no printer of its own): checked per type by _repr_is_plain.
_REPR_MODULES = ("numpy", "pandas", "matplotlib", "datetime")
# Exact types IPython prints as repr (lib/pretty.py: int, float, str, bytes
# through _repr_pprint; None, True, False as singletons; complex by its own
# __repr__): one line each, so the repr is the text.
_REPR_TYPES = (int, float, complex, str, bytes, bool, type(None))


def _repr_is_plain(obj):
    """Whether IPython's PlainTextFormatter would print `obj` as its repr,
    decided without importing IPython (~250 ms and 600 modules), so
    `1 + 1` and a DataFrame stay fast. IPython walks the type's MRO and
    takes, per class, a printer registered for it, a `_repr_pretty_`, or
    a `__repr__` in its own __dict__ (then the repr, lines split). So: a
    class of these modules that defines __repr__, reached before any
    class that is not theirs (a builtin base such as float, which IPython
    has printers for). A numpy float64 is `'%r' % x` there: the repr too."""
    cls = type(obj)
    if cls in _REPR_TYPES:
        return True
    for klass in cls.__mro__:
        if klass is object:
            return False
        if str(getattr(klass, "__module__", None) or "").split(".")[0] not in _REPR_MODULES:
            return False
        if "_repr_pretty_" in klass.__dict__:
            return False
        if "__repr__" in klass.__dict__:
            return True
    return False


_formatter = [None, None]  # (PlainTextFormatter class, its instance), made once


def _plain(obj):
    """The text a notebook's text/plain shows for `obj`: IPython's own
    PlainTextFormatter when IPython is importable, else the stdlib's
    nearest (_plain_stdlib)."""
    if _repr_is_plain(obj):
        return _lines(repr(obj))
    try:
        # Imported each time (a lookup once loaded): a cell that blocks it
        # (sys.modules["IPython"] = None) or uninstalls it gets the
        # fallback. `import IPython.…` checks the top package, which a
        # `from IPython.core.formatters import …` of a cached submodule
        # would not.
        with warnings.catch_warnings():  # its import's warnings are not the cell's
            warnings.simplefilter("ignore")
            import IPython.core.formatters as formatters
    except Exception:  # absent, blocked, or an install that fails to import
        return _plain_stdlib(obj)
    if _formatter[0] is not formatters.PlainTextFormatter:
        _formatter[:] = [formatters.PlainTextFormatter, formatters.PlainTextFormatter()]
    fmt = _formatter[1]
    # Its __call__ is wrapped to print a failure and return None; the
    # unwrapped one raises instead, and the stdlib's text is used — or, if
    # the value's own repr is what fails, that error ends the cell.
    call = getattr(type(fmt).__call__, "__wrapped__", None)
    try:
        text = call(fmt, obj) if call is not None else fmt(obj)
    except Exception:
        text = None
    return text if isinstance(text, str) else _plain_stdlib(obj)


# What pprint shows of these, like IPython, breaks over lines at 79
# columns; anything else is its repr.
_PPRINT_TYPES = (dict, list, tuple, set, frozenset)
# Past this many items pprint is 20 times slower than repr and the text far
# past the echo's cap anyway (IPython itself stops at 1000): repr them.
_PPRINT_MAX_ITEMS = 1000


def _plain_stdlib(obj):
    """Without IPython: builtin containers through pprint at IPython's
    width and in insertion order, everything else its repr. Measured
    against IPython 8 (lib/pretty.py), pprint differs in that it
      - aligns a nested container's items under its opening bracket
        (IPython indents one column per level);
      - splits a long string into adjacent literals ('ab' 'cd');
      - counts a multi-line repr (a numpy array in a dict) as one line, so
        keeps it beside its neighbours and does not indent its later lines;
      - shows every item (IPython stops at 1000 with `...`);
      - and the repr of a class, a function, or an object without __repr__
        is Python's (`<class 'x.Y'>`, `<x.Y object at 0x…>`; IPython
        writes `x.Y`, `<x.Y at 0x…>`).
    Flat containers that fit or break one item a line are the same."""
    if isinstance(obj, _PPRINT_TYPES) and len(obj) <= _PPRINT_MAX_ITEMS:
        import pprint
        try:  # pprint itself keeps a subclass's own repr
            return pprint.pformat(obj, width=79, sort_dicts=False)
        except RecursionError:  # nested deeper than pprint recurses; repr goes on
            pass
    return _lines(repr(obj))


_pandas_as_in_a_notebook = [False]


def _as_in_a_notebook(pd):
    """pandas picks its column limit when it is imported: 20 in a Jupyter
    kernel, 0 (fit the terminal's width) anywhere else, this driver
    included. A notebook's text/plain is the kernel's, so a limit still at
    the terminal's 0 becomes the kernel's 20, once; a limit the cell set
    itself afterwards stands."""
    if _pandas_as_in_a_notebook[0]:
        return
    _pandas_as_in_a_notebook[0] = True
    try:
        if pd.get_option("display.max_columns") == 0:
            pd.set_option("display.max_columns", 20)
    except Exception:  # a pandas without the option: nothing to match
        pass


def _rich(obj):
    """(text, html, png) for a value: the text is what a notebook's
    text/plain shows (pandas' repr keeps a DataFrame's shape line and a
    Series' name and dtype, and follows pd.set_option as in a notebook)."""
    mod = str(getattr(type(obj), "__module__", None) or "")
    pd = sys.modules.get("pandas")
    if pd is not None and hasattr(pd, "get_option"):
        _as_in_a_notebook(pd)
    if pd is not None and isinstance(obj, getattr(pd, "DataFrame", ())):
        return _clip_shown(_plain(obj)), obj.to_html(max_rows=60, max_cols=20), None
    if mod.startswith("matplotlib") and hasattr(obj, "savefig"):
        return _plain(obj), None, _figure_png(obj)
    if mod.startswith("matplotlib") and hasattr(obj, "figure") and hasattr(obj.figure, "savefig"):
        return _plain(obj), None, _figure_png(obj.figure)
    return _clip_shown(_plain(obj)), None, None


_shown_figures = set()


def display(*objs):
    """Shows values in the transcript: tables for DataFrames, images for figures."""
    for obj in objs:
        _show(obj, *_rich(obj))


def _show(obj, text, html, png):
    send({"ev": "display", "text": text, "html": html, "png": png})
    fig = getattr(obj, "figure", obj)
    if png is not None:
        _shown_figures.add(id(fig))
        plt = sys.modules.get("matplotlib.pyplot")
        if plt is not None:
            plt.close(fig)


def _flush_figures():
    plt = sys.modules.get("matplotlib.pyplot")
    if plt is None:
        return
    for num in plt.get_fignums():
        fig = plt.figure(num)
        if id(fig) not in _shown_figures:
            send({"ev": "display", "text": _plain(fig), "html": None, "png": _figure_png(fig)})
    plt.close("all")
    _shown_figures.clear()


# --- magics ----------------------------------------------------------------------------
def _sh(cmd, capture=False):
    if capture:
        done = subprocess.run(cmd, shell=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        return done.stdout.splitlines()
    sys.stdout.flush()
    subprocess.run(cmd, shell=True)
    return None


def _bash(body):
    sys.stdout.flush()
    subprocess.run(["bash", "-c", body])


def _cd(path):
    os.chdir(os.path.expanduser(path.strip().strip("'\"") or "~"))
    print(os.getcwd())


def _installed():
    import importlib.metadata as md
    return {(d.metadata["Name"] or "").lower(): d.version for d in md.distributions()}


class PipFailed(Exception):
    """%pip exited non-zero: the cell is an error, with pip's last lines."""


def _pip(args):
    sys.stdout.flush()
    before = _installed()
    # As a shell would split them: `%pip install "pkg>=1"` quotes a requirement.
    try:
        argv = shlex.split(args)
    except ValueError as e:
        raise PipFailed("%%pip %s: the arguments do not parse (%s); check the quotes" % (args.strip(), e))
    done = subprocess.run([sys.executable, "-m", "pip"] + argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    after = _installed()
    # Whatever pip installed, upgraded or removed, however quietly it ran.
    changed = [name for name in set(before) | set(after) if before.get(name) != after.get(name)]
    _evict(changed)
    if done.returncode != 0:
        last = [l for l in done.stdout.splitlines() if l.strip()][-8:]
        raise PipFailed("pip %s exited with status %d:\n%s" % (args.strip(), done.returncode, "\n".join(last)))
    print(done.stdout, end="")


def _evict(dists):
    """Forgets imported modules of the given distributions, so the next
    import loads what pip just installed."""
    import importlib
    import importlib.metadata as md
    names = set()
    for dist in dists:
        names.add(dist.replace("-", "_").lower())
        try:
            d = md.distribution(dist)
            top = d.read_text("top_level.txt")
            if top:
                names.update(t.strip() for t in top.split() if t.strip())
            for f in d.files or []:
                part = str(f).split("/")[0]
                if part.endswith(".py"):
                    part = part[:-3]
                if part and ".dist-info" not in part and not part.startswith("__"):
                    names.add(part)
        except Exception:
            pass
    for mod in list(sys.modules):
        if mod.split(".")[0].lower() in {n.lower() for n in names}:
            del sys.modules[mod]
    importlib.invalidate_caches()


def _timeit(stmt, setup="pass"):
    import timeit
    timer = timeit.Timer(stmt, setup=setup, globals=_ns)
    number, _ = timer.autorange()
    best = min(timer.repeat(repeat=5, number=number)) / number
    for unit, scale in (("s", 1), ("ms", 1e3), ("µs", 1e6), ("ns", 1e9)):
        if best * scale >= 1 or unit == "ns":
            print("%d loops, best of 5: %.3g %s per loop" % (number, best * scale, unit))
            break


_MAGIC_LINE = re.compile(r"^(\s*)(?:(\w+)\s*=\s*)?(!|%)(.*)$")


def _continuation_states(code):
    """For each line, whether it starts inside a statement already begun: in
    a triple-quoted string, inside brackets, or after a backslash — a
    magic can only start a statement."""
    states = []
    inside = None
    depth = 0
    continued = False
    for line in code.split("\n"):
        states.append(inside is not None or depth > 0 or continued)
        continued = False
        if not states[-1] and _MAGIC_LINE.match(line):
            continue  # a magic is not Python: its brackets and quotes do not count
        i = 0
        quote = None
        while i < len(line):
            if inside:
                if line.startswith(inside, i):
                    inside = None
                    i += 3
                    continue
                if line[i] == "\\":
                    i += 2
                    continue
                i += 1
                continue
            c = line[i]
            if quote:
                if c == "\\":
                    i += 2
                    continue
                if c == quote:
                    quote = None
                i += 1
                continue
            if c == "#":
                break
            if line.startswith('"""', i) or line.startswith("'''", i):
                inside = line[i:i + 3]
                i += 3
                continue
            if c in "\"'":
                quote = c
            elif c in "([{":
                depth += 1
            elif c in ")]}":
                depth = max(0, depth - 1)
            i += 1
        continued = inside is None and line.endswith("\\") and not line.endswith("\\\\")
    return states


def rewrite(code):
    """IPython idioms → plain Python; only where a statement starts (never
    inside a string literal, brackets or a continued line)."""
    lines = code.split("\n")
    first = lines[0].strip() if lines else ""
    if first.startswith("%%bash"):
        return "_tether_bash(%r)" % "\n".join(lines[1:])
    if first.startswith("%%timeit"):
        setup = first[len("%%timeit"):].strip() or "pass"
        return "_tether_timeit(%r, %r)" % ("\n".join(lines[1:]), setup)
    out = []
    for line, within in zip(lines, _continuation_states(code)):
        m = None if within else _MAGIC_LINE.match(line)
        if not m:
            out.append(line)
            continue
        indent, target, sigil, rest = m.groups()
        if sigil == "!":
            call = "_tether_sh(%r, capture=%s)" % (rest, bool(target))
        else:
            name, _, arg = rest.partition(" ")
            if name == "pip":
                call = "_tether_pip(%r)" % arg
            elif name == "cd":
                call = "_tether_cd(%r)" % arg
            elif name == "timeit":
                call = "_tether_timeit(%r)" % arg
            else:
                raise SyntaxError("the magic %%%s is not supported; supported: %%pip, %%cd, %%timeit, %%%%bash, %%%%timeit, !cmd" % name)
        out.append(indent + (target + " = " if target else "") + call)
    return "\n".join(out)


# --- running cells ----------------------------------------------------------------------
_ns = {"__name__": "__main__", "display": display, "tool": tool, "ToolError": ToolError,
       "_tether_sh": _sh, "_tether_bash": _bash, "_tether_cd": _cd, "_tether_pip": _pip,
       "_tether_timeit": _timeit}
_cell_no = [0]


def _format_error(exc, filename):
    if isinstance(exc, PipFailed):
        # pip's own words are the whole story; the driver's frames are not.
        text = "".join(traceback.format_exception_only(type(exc), exc))
        return {"type": type(exc).__name__, "message": _clip(_text_of(exc)), "traceback": _clip(text)}
    tb = exc.__traceback__
    frames = traceback.extract_tb(tb)
    # Keep the cell's own frames (and what they called last).
    kept = [f for f in frames if f.filename == filename]
    if frames and (not kept or kept[-1] is not frames[-1]):
        kept.append(frames[-1])
    lines = ["Traceback (most recent call last):\n"] + traceback.format_list(kept)
    lines += traceback.format_exception_only(type(exc), exc)
    return {"type": type(exc).__name__, "message": _clip(_text_of(exc)), "traceback": _clip("".join(lines))}


def _text_of(exc):
    # An exception's own __str__ may raise: the answer must still go out.
    try:
        return str(exc)
    except BaseException as inner:
        return "<%s; str() of it raised %s>" % (type(exc).__name__, type(inner).__name__)


def run(code):
    _cell_no[0] += 1
    filename = "<cell %d>" % _cell_no[0]
    echo = None
    try:
        source = rewrite(code)
        tree = ast.parse(source, filename)
        last = None
        if tree.body and isinstance(tree.body[-1], ast.Expr):
            last = ast.Expression(tree.body.pop().value)
        # Cell lines show in tracebacks.
        import linecache
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
        exec(compile(tree, filename, "exec"), _ns)
        if last is not None:
            value = eval(compile(last, filename, "eval"), _ns)
            if value is not None:
                _ns["_"] = value
                text, html, png = _rich(value)
                if png is not None or html is not None:
                    _show(value, text, html, png)
                else:
                    echo = text
        _flush_figures()
        return {"status": "ok", "echo": echo}
    except KeyboardInterrupt as exc:
        return {"status": "interrupted", "error": _format_error(exc, filename)}
    except BaseException as exc:  # SystemExit included: the kernel stays up
        try:
            _flush_figures()
        except Exception:
            pass
        return {"status": "error", "error": _format_error(exc, filename)}


_main_queue = []
_main_cond = threading.Condition()
# The id of the cell running now (None between cells).
_running = [None]
_running_lock = threading.Lock()


def _commands():
    for raw in _proto_in:
        try:
            msg = json.loads(raw)
        except ValueError:
            continue
        op = msg.get("op")
        if op == "interrupt":
            # Only the cell it names, and only while it runs: an interrupt
            # that arrives after its cell ended must not hit the main loop.
            with _running_lock:
                if _running[0] is not None and msg.get("id") in (None, _running[0]):
                    signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)
        elif op == "tool_result":
            with _bridge_lock:
                waiter = _bridge_waiters.get(msg.get("id"))
                if waiter:
                    waiter[1] = msg
                    waiter[0].set()
        else:
            with _main_cond:
                _main_queue.append(msg)
                _main_cond.notify()
    os._exit(0)


def main():
    threading.Thread(target=_commands, daemon=True).start()
    send({"ev": "ready", "pid": os.getpid(), "version": sys.version.split()[0], "executable": sys.executable})
    while True:
        try:
            with _main_cond:
                while not _main_queue:
                    _main_cond.wait()
                msg = _main_queue.pop(0)
        except KeyboardInterrupt:
            continue  # a stray SIGINT between cells (from outside): nothing to stop
        if msg.get("op") != "run":
            continue
        _capture.reset(None)
        with _running_lock:
            _running[0] = msg.get("id")
        try:
            result = run(msg.get("code", ""))
        except KeyboardInterrupt as exc:
            result = {"status": "interrupted", "error": {"type": "KeyboardInterrupt", "message": "", "traceback": ""}}
        finally:
            with _running_lock:
                _running[0] = None
        if os.getpid() != _KERNEL_PID:
            # A forked child came back out of the cell (it returned, or
            # raised SystemExit): it ends here, as a script's child would.
            for stream in (sys.stdout, sys.stderr):
                try:
                    stream.flush()
                except Exception:
                    pass
            os._exit(0 if result.get("status") == "ok" else 1)
        try:
            drain()
        except KeyboardInterrupt:
            pass
        result.update({"ev": "done", "id": msg.get("id"), "dropped": _capture.dropped,
                       "tail": _whole_chars(_capture.tail) if _capture.dropped else ""})
        send(result)


try:
    main()
except BaseException:
    # The driver itself failed: say why where the death report looks.
    traceback.print_exc(file=_crash_log)
    raise
