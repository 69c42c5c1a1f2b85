#!/usr/bin/env python3
"""The hunt for wrong answers (tests/it/faults/hunt.rs) at benchmark size, on real
projects nobody here wrote: FastAPI 0.115.0 (pyright), rxjs 7.8.1's
TypeScript sources (typescript-language-server), cobra 1.6.1 from
Debian (gopls), semver 1.0.23 from crates.io (rust-analyzer), Brotli
1.1.0's C library from its PyPI sdist (clangd) and @capacitor/android
6.2.0's Java sources from npm (jdtls).

    cargo build --release
    python3 benches/hunt_bench.py --project fastapi --ops 2000
    python3 benches/hunt_bench.py --project rxjs --ops 2000
    python3 benches/hunt_bench.py --project cobra --ops 2000
    python3 benches/hunt_bench.py --project semver --ops 2000
    python3 benches/hunt_bench.py --project brotli --ops 2000 --busy 1
    python3 benches/hunt_bench.py --project capacitor --ops 2000
    python3 benches/hunt_bench.py --project fastapi --ops 2000 --writers
    python3 benches/hunt_bench.py --project rxjs --ops 2000 --writers

`--writers` runs the hunt with writers instead (tests/mcp/hunt_writers.py,
which holds its checker): four conversations write four files of the
project at once — write, edit, apply_patch, lsp_rename, ast_edit+resolve —
beside an outside writer, two CPU-bound processes and four server kills.

Callers, all at once in every round: HTTP sessions of one `tether serve
--http` run and parallel calls in one `tether serve` stdio session (the
official MCP Python SDK). Operations: references, definition, hover,
diagnostics, workspace symbols. Between rounds (and sometimes during one)
the world changes the project with plain file I/O and git: a call to the
target appended to or removed from a probe file, a library file broken and
fixed, a probe module created and deleted, a checkout of a branch that
adds probe modules. Two CPU-bound processes run beside; the language
server is SIGKILLed `--kills` times (4 by default), each mid-round.

The checker: the first answers, from one caller on the idle project, are
the oracle's baseline (the references count, the diagnostics of the file
that is broken later); every change moves the expected answer by a known
amount. An answer must be right for the content before the round or after
a change made during it, or say that it may not be (partial, pending,
stale, unconfirmed, or an error naming its cause). Prints one `hunt bench:`
line; exits 1 if any answer was wrong and read as complete.

The projects come from the registries (pip download / npm pack) into
target/bench-peers and are copied for each run.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from contextlib import AsyncExitStack

import anyio
import mcp.types as types
from mcp import StdioServerParameters
from mcp.client.client import Client
from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "benches", "support"))
from served import serve_http  # noqa: E402
PEERS = os.path.join(REPO, "target", "bench-peers")
TOKEN = "hunt-bench-token-0123456789abcdef"
LABELS = ["may be incomplete", "still indexing", "still re-reading", "still analysing", "(pending",
          "(stale since", "(unconfirmed", "no diagnostics known", "ask again", "may be only partly loaded",
          "these may be uses"]
# Longer than every bounded wait an `lsp` call may make, added up (the
# server's start and the file's sync, the index, the request, the retry
# while the content changed; for the question and each time tether asks it
# anew of a replaced server): as CALL_BOUND in tests/it/faults/hunt.rs.
CALL_BOUND_S = (60 + 20 + 30 + 30) * 3


def fetch_fastapi() -> str:
    dst = os.path.join(PEERS, "fastapi-src")
    if not os.path.isdir(dst):
        os.makedirs(PEERS, exist_ok=True)
        dl = tempfile.mkdtemp()
        subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "fastapi==0.115.0", "--no-binary", ":all:",
                        "--no-deps", "-d", dl], check=True)
        with tarfile.open(os.path.join(dl, "fastapi-0.115.0.tar.gz")) as t:
            t.extractall(PEERS)
        os.rename(os.path.join(PEERS, "fastapi-0.115.0"), dst)
    return dst


def fetch_rxjs() -> str:
    dst = os.path.join(PEERS, "rxjs-src")
    if not os.path.isdir(dst):
        os.makedirs(PEERS, exist_ok=True)
        dl = tempfile.mkdtemp()
        subprocess.run(["npm", "pack", "--silent", "rxjs@7.8.1"], cwd=dl, check=True, stdout=subprocess.DEVNULL)
        with tarfile.open(os.path.join(dl, "rxjs-7.8.1.tgz")) as t:
            t.extractall(dl)
        os.makedirs(dst)
        shutil.copytree(os.path.join(dl, "package", "src"), os.path.join(dst, "src"))
        with open(os.path.join(dst, "tsconfig.json"), "w") as f:
            json.dump({"compilerOptions": {"strict": True, "target": "es2017", "lib": ["es2018", "dom"],
                                           "moduleResolution": "node", "noEmit": True}, "include": ["src/**/*.ts"],
                       "exclude": ["src/**/*.spec.ts"]}, f)
    return dst


COBRA_DEB = "/usr/share/gocode/src/github.com/spf13"


def fetch_cobra() -> str:
    """cobra 1.6.1 from Debian (golang-github-spf13-cobra-dev), its one
    dependency (pflag) from the same place: gopls loads it offline."""
    dst = os.path.join(PEERS, "cobra-src")
    if not os.path.isdir(dst):
        if not os.path.isdir(os.path.join(COBRA_DEB, "cobra")):
            subprocess.run(["apt-get", "install", "-y", "-q", "golang-github-spf13-cobra-dev"], check=True,
                           stdout=subprocess.DEVNULL)
        os.makedirs(PEERS, exist_ok=True)
        shutil.copytree(os.path.join(COBRA_DEB, "cobra"), dst, ignore=shutil.ignore_patterns("doc"))
        # The man-page and YAML generators (doc/) are left out, and with
        # them the dependencies only they and Windows builds need.
        with open(os.path.join(dst, "go.mod"), "w") as f:
            f.write("module github.com/spf13/cobra\n\ngo 1.15\n\nrequire github.com/spf13/pflag v1.0.5\n\n"
                    f"replace github.com/spf13/pflag => {COBRA_DEB}/pflag\n")
        os.remove(os.path.join(dst, "go.sum"))
    return dst


def fetch_semver() -> str:
    """semver 1.0.23 from crates.io (its .crate, unpacked)."""
    dst = os.path.join(PEERS, "semver-src")
    if not os.path.isdir(dst):
        os.makedirs(PEERS, exist_ok=True)
        dl = tempfile.mkdtemp()
        crate = os.path.join(dl, "semver.crate")
        subprocess.run(["curl", "-sSfL", "-o", crate, "https://static.crates.io/crates/semver/semver-1.0.23.crate"],
                       check=True)
        with tarfile.open(crate) as t:
            t.extractall(dl, filter="data")
        shutil.copytree(os.path.join(dl, "semver-1.0.23"), dst)
        # The published manifest names its test targets (`autotests =
        # false`): the probes under tests/ are targets only when found.
        manifest = os.path.join(dst, "Cargo.toml")
        text = open(manifest).read().replace("autotests = false\n", "")
        with open(manifest, "w") as f:
            f.write(text)
    return dst


def fetch_brotli() -> str:
    """Brotli 1.1.0's C library (c/), from its PyPI sdist."""
    dst = os.path.join(PEERS, "brotli-src")
    if not os.path.isdir(dst):
        os.makedirs(PEERS, exist_ok=True)
        dl = tempfile.mkdtemp()
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--disable-pip-version-check", "--no-deps",
                        "--no-binary", ":all:", "Brotli==1.1.0", "-d", dl], check=True)
        with tarfile.open(os.path.join(dl, "Brotli-1.1.0.tar.gz")) as t:
            t.extractall(dl, filter="data")
        os.makedirs(dst)
        shutil.copytree(os.path.join(dl, "Brotli-1.1.0", "c"), os.path.join(dst, "c"))
    return dst


def fetch_capacitor() -> str:
    """@capacitor/android 6.2.0's Java sources, from npm (its Android
    dependencies are not there: jdtls resolves the project's own types)."""
    dst = os.path.join(PEERS, "capacitor-src")
    if not os.path.isdir(dst):
        os.makedirs(PEERS, exist_ok=True)
        dl = tempfile.mkdtemp()
        subprocess.run(["npm", "pack", "-q", "@capacitor/android@6.2.0"], cwd=dl, check=True,
                       stdout=subprocess.DEVNULL)
        with tarfile.open(os.path.join(dl, "capacitor-android-6.2.0.tgz")) as t:
            t.extractall(dl, filter="data")
        shutil.copytree(os.path.join(dl, "package", "capacitor", "src", "main", "java"),
                        os.path.join(dst, "src", "main", "java"))
    return dst


def line_of(path: str, prefix: str) -> int:
    for n, line in enumerate(open(path), 1):
        if line.startswith(prefix):
            return n
    raise RuntimeError(f"{prefix!r} not in {path}")


class Project:
    """What the world writes, and where the answers must point."""

    def __init__(self, name: str, root: str):
        self.name = name
        self.root = root
        # What closes the probe host after its callers (a Java class's brace).
        self.host_tail = ""
        # Other places a definition answer may rightly name (a C header's
        # declaration, before clangd's index holds the definition), and
        # files a workspace symbol may rightly be in.
        self.def_also: list[str] = []
        if name == "fastapi":
            self.server = "pyright"
            self.target = "fastapi/param_functions.py"
            self.line = line_of(os.path.join(root, self.target), "def Depends(")
            self.symbol = "Depends"
            self.def_line = self.line
            self.host = "fastapi/_probe_host.py"
            self.host_head = "import fastapi.param_functions\n\n\ndef _probe_first():\n    return fastapi.param_functions.Depends()\n"
            self.host_call_line, self.host_call_symbol = 5, "Depends"
            self.caller = lambda k: f"\n\ndef _probe_{k}():\n    return fastapi.param_functions.Depends()\n"
            self.refs_per_caller = 1
            self.module = lambda k: (f"fastapi/_probe_new_{k}.py",
                                     f"import fastapi.param_functions\n\nVALUE_{k} = fastapi.param_functions.Depends()\n", 1)
            self.broken_file = "fastapi/utils.py"
            self.error = lambda k: f"\n\ndef _bad_{k}():\n    return 1 + 'x'\n"
            self.error_word = 'Operator "+" not supported'
        elif name == "cobra":
            self.server = "gopls"
            self.target = "args.go"
            self.line = line_of(os.path.join(root, self.target), "func NoArgs(")
            self.symbol = "NoArgs"
            self.def_line = self.line
            # Files starting with `_` are ignored by the go tool.
            self.host = "zz_probe_host.go"
            self.host_head = "package cobra\n\nfunc probeFirst() error {\n\treturn NoArgs(nil, nil)\n}\n"
            self.host_call_line, self.host_call_symbol = 4, "NoArgs"
            self.caller = lambda k: f"\nfunc probe{k}() error {{\n\treturn NoArgs(nil, nil)\n}}\n"
            self.refs_per_caller = 1
            self.module = lambda k: (f"zz_probe_new_{k}.go", f"package cobra\n\nvar probeValue{k} = NoArgs(nil, nil)\n", 1)
            self.broken_file = "cobra.go"
            self.error = lambda k: f"\nvar _bad{k} int = \"x\"\n"
            self.error_word = "cannot use"
        elif name == "semver":
            self.server = "rust-analyzer"
            self.target = "src/lib.rs"
            # `Version::parse`, the first `parse` of the file.
            self.line = line_of(os.path.join(root, self.target), "    pub fn parse(text: &str) -> Result<Self, Error> {")
            self.symbol = "parse"
            self.def_line = self.line
            # Probes are test targets of their own: a module would need a
            # `mod` line in lib.rs.
            self.host = "tests/zz_probe_host.rs"
            self.host_head = "use semver::Version;\n\n#[test]\nfn probe_first() {\n    let _ = Version::parse(\"1.0.0\");\n}\n"
            self.host_call_line, self.host_call_symbol = 5, "parse"
            self.caller = lambda k: f"\n#[test]\nfn probe_{k}() {{\n    let _ = Version::parse(\"1.0.0\");\n}}\n"
            self.refs_per_caller = 1
            self.module = lambda k: (f"tests/zz_probe_new_{k}.rs",
                                     f"use semver::Version;\n\n#[test]\nfn probe_new_{k}() {{\n    let _ = Version::parse(\"1.0.0\");\n}}\n", 1)
            self.broken_file = "src/display.rs"
            self.error = lambda k: f"\npub fn _bad_{k}() -> i32 {{\n    \"x\"\n}}\n"
            self.error_word = "E0308"
        elif name == "brotli":
            self.server = "clangd"
            self.target = "c/common/dictionary.c"
            self.line = line_of(os.path.join(root, self.target), "const BrotliDictionary* BrotliGetDictionary(void) {")
            self.symbol = "BrotliGetDictionary"
            self.def_line = self.line
            self.def_also = [f"c/common/dictionary.h:{line_of(os.path.join(root, 'c/common/dictionary.h'), 'BROTLI_COMMON_API const BrotliDictionary* BrotliGetDictionary')}:"]
            self.host = "c/common/zz_probe_host.c"
            self.host_head = ("#include \"dictionary.h\"\n\nconst BrotliDictionary* probe_first(void) {\n"
                              "  return BrotliGetDictionary();\n}\n")
            self.host_call_line, self.host_call_symbol = 4, "BrotliGetDictionary"
            self.caller = lambda k: f"\nconst BrotliDictionary* probe_{k}(void) {{\n  return BrotliGetDictionary();\n}}\n"
            self.refs_per_caller = 1
            self.module = lambda k: (f"c/common/zz_probe_new_{k}.c",
                                     f"#include \"dictionary.h\"\n\nconst BrotliDictionary* probe_value_{k}(void) {{\n"
                                     "  return BrotliGetDictionary();\n}\n", 1)
            self.broken_file = "c/common/constants.c"
            self.error = lambda k: f"\nstatic int bad_{k} = undeclared_name_{k};\n"
            self.error_word = "undeclared identifier"
            # clangd indexes what its compilation database names; the probes
            # it does not name are opened by tether, and take the include
            # directory from .clangd as every file does.
            include = os.path.join(root, "c", "include")
            entries = [{"directory": root, "file": os.path.join(d, f),
                        "command": f"cc -std=c99 -I{include} -c {os.path.join(d, f)}"}
                       for d, _, files in os.walk(os.path.join(root, "c")) for f in files if f.endswith(".c")]
            self.write("compile_commands.json", json.dumps(entries))
            self.write(".clangd", f"CompileFlags:\n  Add: [-I{include}]\n")
        elif name == "capacitor":
            self.server = "jdtls"
            pkg = "src/main/java/com/getcapacitor"
            self.target = f"{pkg}/Logger.java"
            # `Logger.debug(String)`, one of two overloads: a one-argument call resolves to it.
            self.line = line_of(os.path.join(root, self.target), "    public static void debug(String message) {")
            self.symbol = "debug"
            self.def_line = self.line
            self.host = f"{pkg}/ZzProbeHost.java"
            self.host_head = ("package com.getcapacitor;\n\nclass ZzProbeHost {\n\n    static void probeFirst() {\n"
                              "        Logger.debug(\"x\");\n    }\n")
            self.host_tail = "}\n"
            self.host_call_line, self.host_call_symbol = 6, "debug"
            self.caller = lambda k: f"\n    static void probe{k}() {{\n        Logger.debug(\"x\");\n    }}\n"
            self.refs_per_caller = 1
            self.module = lambda k: (f"{pkg}/ZzProbeNew{k}.java",
                                     f"package com.getcapacitor;\n\nclass ZzProbeNew{k} {{\n    static void probe() {{\n"
                                     "        Logger.debug(\"x\");\n    }\n}\n", 1)
            self.broken_file = f"{pkg}/PluginResult.java"
            self.error = lambda k: f"\n    static int bad{k} = \"x\";\n"
            self.error_word = "Type mismatch"
        else:
            self.server = "typescript-language-server"
            self.target = "src/internal/operators/map.ts"
            self.line = line_of(os.path.join(root, self.target), "export function map<T, R>(project: (value: T, index: number) => R, thisArg?: any)")
            self.symbol = "map"
            # A call resolves to the overload it matches, not the implementation.
            self.def_line = line_of(os.path.join(root, self.target),
                                    "export function map<T, R>(project: (value: T, index: number) => R): OperatorFunction<T, R>;")
            self.host = "src/internal/_probe_host.ts"
            self.host_head = "import { map } from './operators/map';\n\nexport const probeFirst = map((x: number) => x);\n"
            self.host_call_line, self.host_call_symbol = 3, "map"
            self.caller = lambda k: f"export const probe{k} = map((x: number) => x + {k});\n"
            self.refs_per_caller = 1
            self.module = lambda k: (f"src/internal/_probe_new_{k}.ts",
                                     f"import {{ map }} from './operators/map';\n\nexport const value{k} = map((x: number) => x);\n", 2)
            self.broken_file = "src/internal/operators/filter.ts"
            self.error = lambda k: f"\nconst _bad{k}: number = 's';\n"
            self.error_word = "not assignable"

    def broken(self, base: str, serial: int) -> str:
        """The broken file: the error appended, inside a Java class's last brace."""
        if self.host_tail:
            at = base.rstrip().rfind("}")
            return base[:at] + self.error(serial) + base[at:]
        return base + self.error(serial)

    def write(self, rel: str, text: str):
        path = os.path.join(self.root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)


def git(root: str, *args: str):
    subprocess.run(["git", "-c", "user.name=hunt", "-c", "user.email=hunt@example.invalid", *args], cwd=root,
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


class World:
    BRANCH_FILES = 3

    def __init__(self, p: Project):
        self.p = p
        self.callers: list[int] = []
        self.broken: int | None = None
        self.modules: list[int] = []
        self.branch = False
        self.broken_base = open(os.path.join(p.root, p.broken_file)).read()
        # Every state the disk passed through during the current change: a
        # change of several files is written one file at a time, and an
        # answer computed between two of them is right for that state.
        self.trail: list = []

    def mark(self):
        self.trail.append(self.state())

    def state(self, branch_files: int | None = None):
        """What is on disk; the last part counts the branch's files present."""
        if branch_files is None:
            branch_files = self.BRANCH_FILES if self.branch else 0
        return (tuple(self.callers), self.broken, tuple(self.modules), branch_files)

    def refs_delta(self, state) -> int:
        callers, _, modules, branch_files = state
        per_module = self.p.module(0)[2]
        return self.p.refs_per_caller * len(callers) + per_module * (len(modules) + branch_files)

    def write_host(self):
        self.p.write(self.p.host, self.p.host_head + "".join(self.p.caller(k) for k in self.callers) + self.p.host_tail)
        self.mark()

    def change(self, rng: random.Random, serial: int) -> str:
        p = self.p
        pick = rng.randrange(10)
        dirty = self.callers or self.broken is not None or self.modules
        if pick <= 2:
            self.callers.append(serial)
            self.write_host()
            return "appended a caller"
        if pick == 3 and self.callers:
            self.callers.pop()
            self.write_host()
            return "removed a caller"
        if pick <= 5:
            if self.broken is None:
                self.broken = serial
                p.write(p.broken_file, p.broken(self.broken_base, serial))
                self.mark()
                return f"broke {p.broken_file}"
            self.broken = None
            p.write(p.broken_file, self.broken_base)
            self.mark()
            return f"fixed {p.broken_file}"
        if pick <= 7:
            if len(self.modules) < 3:
                self.modules.append(serial)
                rel, text, _ = p.module(serial)
                p.write(rel, text)
                self.mark()
                return "created a module"
            k = self.modules.pop(0)
            os.remove(os.path.join(p.root, p.module(k)[0]))
            self.mark()
            return "deleted a module"
        if dirty:
            self.callers.clear()
            self.write_host()
            if self.broken is not None:
                self.broken = None
                p.write(p.broken_file, self.broken_base)
                self.mark()
            while self.modules:
                k = self.modules.pop(0)
                os.remove(os.path.join(p.root, p.module(k)[0]))
                self.mark()
            return "reverted every change"
        self.branch = not self.branch
        git(p.root, "checkout", "-q", "more" if self.branch else "main")
        # git writes the branch's files one by one.
        for present in range(1, self.BRANCH_FILES):
            self.trail.append(self.state(present))
        self.mark()
        return f"checked out {'more' if self.branch else 'main'}"


def text_of(r) -> str:
    return "\n".join(c.text for c in r.content if isinstance(c, types.TextContent))


def references_total(text: str) -> int | None:
    if text.startswith("no references"):
        return 0
    m = re.match(r"(\d+) references? to", text)
    return int(m.group(1)) if m else None


def server_pids(tether_pid: int, marker: str) -> list[int]:
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            cmd = open(f"/proc/{entry}/cmdline", "rb").read().replace(b"\0", b" ").decode(errors="replace")
            env = open(f"/proc/{entry}/environ", "rb").read()
        except OSError:
            continue
        if marker in cmd and b"TETHER_CHILD" in env:
            pids.append(int(entry))
    return pids


# The files the conversations of the hunt with writers write at once, and
# the names module it adds beside them.
WRITERS_HOT = {
    "fastapi": ("python", "fastapi/_hunt_names.py",
                ["fastapi/params.py", "fastapi/utils.py", "fastapi/exceptions.py", "fastapi/encoders.py"]),
    "rxjs": ("typescript", "src/internal/_hunt_names.ts",
             ["src/internal/operators/map.ts", "src/internal/operators/filter.ts", "src/internal/util/pipe.ts",
              "src/internal/Notification.ts"]),
}


def hunt_writers(args, source: str) -> int:
    """`--writers`: conversations of one `tether serve --http` run write the
    same files of the project at once (tests/mcp/hunt_writers.py holds the
    run and its checker); `--ops` counts their operations."""
    lang, names, hot = WRITERS_HOT[args.project]
    work = tempfile.mkdtemp(prefix="tether-hunt-writers-")
    root = os.path.join(work, args.project)
    shutil.copytree(source, root)
    try:
        return subprocess.run([sys.executable, os.path.join(REPO, "tests", "mcp", "hunt_writers.py"),
                               "--tether", args.tether, "--root", root, "--lang", lang, "--names", names,
                               "--hot", *hot, "--rounds", str(-(-args.ops // args.sessions)),
                               "--conversations", str(args.sessions), "--kills", str(args.kills),
                               "--busy", str(args.busy), "--seed", str(args.seed),
                               "--seconds", str(args.seconds)]).returncode
    finally:
        shutil.rmtree(work, ignore_errors=True)


async def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--project", choices=["fastapi", "rxjs", "cobra", "semver", "brotli", "capacitor"], required=True)
    ap.add_argument("--ops", type=int, default=2000)
    ap.add_argument("--sessions", type=int, default=4)
    ap.add_argument("--parallel", type=int, default=2)
    ap.add_argument("--busy", type=int, default=2)
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--tether", default=os.path.join(REPO, "target", "release", "tether"))
    ap.add_argument("--writers", action="store_true",
                    help="the hunt with writers (tests/mcp/hunt_writers.py) instead of the readers'")
    ap.add_argument("--kills", type=int, default=4, help="server kills in the run")
    ap.add_argument("--seconds", type=float, default=0, help="the hunt with writers starts no round after this")
    args = ap.parse_args()
    source = {"fastapi": fetch_fastapi, "rxjs": fetch_rxjs, "cobra": fetch_cobra, "semver": fetch_semver,
              "brotli": fetch_brotli, "capacitor": fetch_capacitor}[args.project]()
    if args.writers:
        sys.exit(hunt_writers(args, source))
    work = tempfile.mkdtemp(prefix="tether-hunt-")
    root = os.path.join(work, args.project)
    shutil.copytree(source, root)
    p = Project(args.project, root)
    p.write(p.host, p.host_head + p.host_tail)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "base")
    git(root, "checkout", "-qb", "more")
    for j in range(World.BRANCH_FILES):
        rel, text, _ = p.module(100000 + j)
        p.write(rel, text)
    git(root, "add", "-A")
    git(root, "commit", "-qm", "more")
    git(root, "checkout", "-q", "main")
    rng = random.Random(args.seed)
    world = World(p)
    callers_n = args.sessions + args.parallel
    rounds = -(-args.ops // callers_n)
    # The kills, spread evenly over the run.
    kill_rounds = {rounds * (i + 1) // (args.kills + 1) for i in range(args.kills)}
    busy = [subprocess.Popen(["sh", "-c", "while :; do :; done"]) for _ in range(args.busy)]
    port = 50000 + os.getpid() % 1000
    server = serve_http(args.tether, root, TOKEN, port)
    tally = {"right": 0, "labelled": 0, "error": 0, "wrong": 0}
    wrong: list[str] = []
    latencies: list[float] = []
    changes = during = 0
    started = time.monotonic()
    try:
        async with AsyncExitStack() as stack:
            clients = []
            for i in range(args.sessions):
                http = create_mcp_http_client(headers={"Authorization": f"Bearer {TOKEN}"})
                info = types.Implementation(name=f"hunt-{i}", version="1")
                clients.append((f"http-{i}", await stack.enter_async_context(
                    Client(streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=http), client_info=info))))
            stdio = await stack.enter_async_context(
                Client(StdioServerParameters(command=args.tether, args=["serve", "--trusted", "--workdir", root])))
            clients += [(f"stdio-{k}", stdio) for k in range(args.parallel)]
            first = clients[0][1]
            refs_args = {"action": "references", "file": p.target, "line": p.line, "symbol": p.symbol}
            # The oracle's baseline: one caller, idle, asked until two answers agree.
            last = None
            for _ in range(30):
                t = text_of(await first.call_tool("lsp", refs_args))
                total = references_total(t)
                if total is not None and total == last and not any(label in t for label in LABELS):
                    break
                last = total
                await anyio.sleep(1)
            base_refs = last
            diag_args = {"action": "diagnostics", "file": p.broken_file}
            base_diag = text_of(await first.call_tool("lsp", diag_args))
            if p.error_word in base_diag:
                raise RuntimeError(f"{p.broken_file} already shows the error word: {base_diag[:300]}")
            print(f"baseline: {base_refs} references to {p.symbol}; {base_diag.splitlines()[0]}", flush=True)

            def judge(op, text, is_error, states):
                if is_error:
                    return "wrong" if text.startswith("client failure") else "error"

                def right(state):
                    if op == "references":
                        return references_total(text) == base_refs + world.refs_delta(state)
                    if op == "definition":
                        return any(at in text for at in [f"{p.target}:{p.def_line}:"] + p.def_also)
                    if op == "hover":
                        return p.symbol in text
                    if op == "diagnostics":
                        shows = p.error_word in text
                        return "(fresh)" in text and shows == (state[1] is not None)
                    return any(f in text for f in [f"{p.target}:"] + [d.split(":")[0] for d in p.def_also])
                if any(right(s) for s in states):
                    return "right"
                if any(label in text for label in LABELS):
                    return "labelled"
                return "wrong"

            ops = {
                "references": refs_args,
                "definition": {"action": "definition", "file": p.host, "line": p.host_call_line,
                               "symbol": p.host_call_symbol},
                "hover": {"action": "hover", "file": p.target, "line": p.line, "symbol": p.symbol},
                "diagnostics": diag_args,
                "symbols": {"action": "symbols", "query": p.symbol},
            }
            names = ["references"] * 4 + ["definition", "hover"] + ["diagnostics"] * 3 + ["symbols"]
            serial = 0
            for rnd in range(rounds):
                if rnd > 0 and rng.random() < 0.6:
                    serial += 1
                    world.change(rng, serial)
                    changes += 1
                op = rng.choice(names)
                before = world.state()
                world.trail = []
                mid = rnd > 2 and rnd not in kill_rounds and rng.random() < 0.2
                answers = []

                async def one(who, c):
                    t = time.monotonic()
                    try:
                        with anyio.fail_after(CALL_BOUND_S):
                            r = await c.call_tool("lsp", ops[op])
                        answers.append((who, text_of(r), bool(r.is_error), (time.monotonic() - t) * 1000))
                    except Exception as e:
                        answers.append((who, f"client failure: {type(e).__name__}: {e}", True,
                                        (time.monotonic() - t) * 1000))

                async def side():
                    nonlocal serial, changes, during
                    if mid:
                        await anyio.sleep(0.03)
                        serial += 1
                        world.change(rng, serial)
                        changes += 1
                        during += 1
                    elif rnd in kill_rounds:
                        await anyio.sleep(0.05)
                        marker = {"pyright": "pyright", "gopls": "gopls", "rust-analyzer": "rust-analyzer",
                                  "clangd": "clangd", "jdtls": "jdtls"}.get(p.server, "tsserver")
                        for pid in server_pids(server.pid, marker):
                            os.kill(pid, signal.SIGKILL)

                async with anyio.create_task_group() as tg:
                    for who, c in clients:
                        tg.start_soon(one, who, c)
                    tg.start_soon(side)
                states = [before] + world.trail
                world.trail = []
                for who, text, is_error, ms in answers:
                    latencies.append(ms)
                    verdict = judge(op, text, is_error, states)
                    # The server notices its death (and says so) a moment after
                    # the kill: calls of the next round may be in flight then.
                    crash = "exited" in text or "can no longer answer" in text
                    named = "changed on disk" in text or (crash and (rnd in kill_rounds or rnd - 1 in kill_rounds))
                    if verdict == "error" and rnd not in kill_rounds and not named:
                        verdict = "wrong"
                        text = "an error outside the kill round: " + text
                    tally[verdict] += 1
                    if verdict == "wrong":
                        wrong.append(f"round {rnd} {op} from {who} (state {before}): {text[:400]}")
    finally:
        server.terminate()
        server.wait()
        for b in busy:
            b.kill()
        shutil.rmtree(work, ignore_errors=True)
    latencies.sort()
    ops_done = sum(tally.values())
    print(f"hunt bench: {args.project} ({p.server}), {ops_done} operations by {callers_n} callers "
          f"({args.sessions} HTTP sessions, {args.parallel} parallel in one stdio session) over {rounds} rounds; "
          f"{changes} outside changes ({during} during calls); server killed {len(kill_rounds)} times; {args.busy} CPU-bound processes; "
          f"right {tally['right']}, labelled {tally['labelled']}, errors {tally['error']}, "
          f"wrong and complete {tally['wrong']}; p50 {statistics.median(latencies):.0f} ms, "
          f"p99 {latencies[min(len(latencies) - 1, round(0.99 * (len(latencies) - 1)))]:.0f} ms; "
          f"{time.monotonic() - started:.0f} s (seed {args.seed})", flush=True)
    for w in wrong[:20]:
        print("  wrong:", w)
    sys.exit(1 if wrong else 0)


anyio.run(main)
