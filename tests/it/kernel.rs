//! The `eval` tool against real python3 (with pandas, matplotlib and
//! IPython) and node: state, echo (checked against IPython's own
//! formatter), output, errors, display, magics, the tool bridge, the idle
//! budget, interpreter death, reset and bad arguments.

use crate::common;

use std::sync::Arc;
use std::time::Duration;

use crate::common::Harness;
use serde_json::{Value, json};
use tether::{ApprovalPolicy, CallContext, Level, ToolError, ToolFuture, ToolHandler, ToolResult, ToolSpec};

const D: &str = "run a small cell for the test";

fn require_python_libs() {
    let ok = std::process::Command::new("python3")
        .args(["-c", "import pandas, matplotlib"])
        .status()
        .is_ok_and(|s| s.success());
    assert!(
        ok,
        "python3 with pandas and matplotlib is needed; install with `python3 -m pip install pandas matplotlib` (the README's test command does)"
    );
}

fn require_node() {
    let ok = std::process::Command::new("node").arg("--version").status().is_ok_and(|s| s.success());
    assert!(ok, "node is needed; install it with `apt-get install nodejs` (the README's test command does)");
}

async fn py(h: &Harness, code: &str) -> ToolResult {
    h.call("eval", json!({"code": code, "description": D})).await
}

async fn js(h: &Harness, code: &str) -> ToolResult {
    h.call("eval", json!({"code": code, "description": D, "language": "javascript"})).await
}

#[tokio::test]
async fn python_state_echo_output_and_errors() {
    let h = Harness::new(&[]);
    let r = py(&h, "x = 40\nprint('hello')\nimport sys; print('oops', file=sys.stderr)\nx + 2").await;
    assert!(!r.is_error, "{}", r.text);
    assert_eq!(r.text, "hello\noops\nOut: 42");
    assert_eq!(py(&h, "x").await.text, "Out: 40", "state survives between cells");
    assert_eq!(py(&h, "None").await.text, "(python cell ran: no output)", "None is not echoed");
    let r = py(&h, "import os\nos.write(1, b'straight to fd 1\\n')\nprint('after')").await;
    assert_eq!(r.text, "straight to fd 1\nafter");
    let r = py(&h, "def f(n):\n    return 10 / n\n\nf(0)").await;
    assert!(r.is_error);
    assert!(r.text.contains("File \"<cell 5>\", line 2, in f\n    return 10 / n"), "{}", r.text);
    assert!(r.text.ends_with("ZeroDivisionError: division by zero"), "{}", r.text);
    assert_eq!(r.data.unwrap()["error"]["type"], "ZeroDivisionError");
    assert_eq!(py(&h, "x").await.text, "Out: 40", "an exception keeps the kernel");
}

#[tokio::test]
async fn flooding_output_is_capped_and_says_so() {
    let h = Harness::new(&[]);
    let r = py(&h, "for i in range(200000):\n    print('line', i)").await;
    assert!(!r.is_error, "{}", common::head(&r.text, 200));
    assert!(r.text.starts_with("line 0\nline 1\n"), "the head is kept");
    assert!(r.text.contains("bytes of output not shown (cap 64 KiB); the last ones:"), "the cap is stated");
    assert!(r.text.contains("line 199999"), "the tail is kept");
    assert!(r.text.len() < 100 * 1024, "bounded: {} bytes", r.text.len());
    // Whole lines on both sides of the cut: the head ends with a full
    // line, the tail starts with one.
    let (head, rest) = r.text.split_once("\n… ").expect("the cut is marked");
    assert!(head.lines().last().unwrap().starts_with("line "), "{}", common::tail(head, 40));
    let tail = rest.split_once("the last ones:\n").unwrap().1;
    assert!(tail.starts_with("line "), "{}", common::head(tail, 40));
    let numbered = |l: &str| l.strip_prefix("line ").is_some_and(|n| n.parse::<u32>().is_ok());
    assert!(head.lines().chain(tail.lines()).all(numbered), "no half line on either side");
    assert_eq!(py(&h, "1 + 1").await.text, "Out: 2", "the protocol survived the flood");
}

#[tokio::test]
async fn dataframes_render_as_tables_and_figures_as_png() {
    require_python_libs();
    let h = Harness::new(&[]);
    let r = py(&h, "import pandas as pd\ndf = pd.DataFrame({'city': ['Oslo', 'Lima'], 'temp': [3, 19]})\ndf")
        .await;
    assert!(!r.is_error, "{}", r.text);
    assert!(r.text.contains("city  temp") && r.text.contains("Oslo") && r.text.contains("19"), "{}", r.text);
    let data = r.data.unwrap();
    assert!(
        data["displays"][0]["html"].as_str().unwrap().contains("<table"),
        "the HTML form is kept in data"
    );

    let r = py(&h, "import matplotlib.pyplot as plt\nfig, ax = plt.subplots()\nax.plot([1, 2, 3], [1, 4, 9])\ndisplay(df)\nNone").await;
    assert!(!r.is_error, "{}", r.text);
    assert_eq!(r.images.len(), 1, "the figure left open is shown once: {}", r.text);
    use base64_check::png_magic;
    assert!(png_magic(&r.images[0].base64), "a valid PNG");
    assert_eq!(r.images[0].mime, "image/png");
    let r = py(&h, "import matplotlib.pyplot as plt\nlen(plt.get_fignums())").await;
    assert_eq!(r.text, "Out: 0", "and closed after the cell");
    let r = py(&h, "import matplotlib\nmatplotlib.get_backend()").await;
    assert!(r.text.to_lowercase().contains("agg"), "{}", r.text);
}

fn require_ipython() {
    let ok = std::process::Command::new("python3")
        .args(["-c", "import pandas, numpy, IPython.core.formatters"])
        .status()
        .is_ok_and(|s| s.success());
    assert!(
        ok,
        "python3 with pandas, numpy and IPython is needed (IPython's formatter is what echoes are checked against); install with `python3 -m pip install pandas ipython` (the README's test command does)"
    );
}

/// Runs `_v = {expr}` then `_v`, and gives the cell's answer, the text it
/// showed for the value (its echo, or a DataFrame's display text), and
/// what IPython's own formatter gives for the same value — computed by a
/// second cell with a fresh `PlainTextFormatter`, not through the driver.
async fn shown_and_ipython(h: &Harness, expr: &str) -> (ToolResult, String, String) {
    let r = py(h, &format!("_v = {expr}\n_v")).await;
    assert!(!r.is_error, "{expr}: {}", r.text);
    let data = r.data.clone().unwrap();
    let shown = match (data["echo"].as_str(), data["displays"][0]["text"].as_str()) {
        (Some(echo), _) => echo.to_string(),
        (None, Some(display)) => display.to_string(),
        (None, None) => panic!("{expr}: neither echoed nor displayed: {}", r.text),
    };
    let ipython = py(
        h,
        "import json\nfrom IPython.core.formatters import PlainTextFormatter\nprint(json.dumps(PlainTextFormatter()(_v)))",
    )
    .await;
    assert!(!ipython.is_error, "{}", ipython.text);
    let expected: String = serde_json::from_str(&ipython.text).expect("IPython's text, as JSON");
    (r, shown, expected)
}

#[tokio::test]
async fn echoes_are_what_ipythons_formatter_shows() {
    require_ipython();
    let h = Harness::new(&[]);
    py(&h, "import datetime\nimport numpy as np\nimport pandas as pd").await;

    // Values IPython prints as their repr never load IPython: `1 + 1` and
    // a DataFrame stay fast.
    for expr in [
        "1 + 1",
        "pd.Series([1.5, 2.0], name='revenue')",
        "pd.Index(['Oslo', 'Lima'], name='city')",
        "pd.DataFrame({'a': range(100)})",
        "np.arange(12).reshape(3, 4) / 7",
        "pd.Timestamp('2024-05-01 12:30', tz='UTC')",
    ] {
        py(&h, expr).await;
    }
    assert_eq!(py(&h, "import sys\n'IPython' in sys.modules").await.text, "Out: False");

    let (r, shown, expected) = shown_and_ipython(&h, "pd.Series([1.5, 2.0], name='revenue')").await;
    assert_eq!(shown, expected);
    assert!(shown.ends_with("Name: revenue, dtype: float64"), "the Series' footer is kept: {shown}");
    assert_eq!(r.text, format!("Out:\n{expected}"), "a value of several lines starts on its own line");

    for expr in [
        "pd.Index(['Oslo', 'Lima', 'Pune'], name='city')",
        "pd.date_range('2024-01-01', periods=3, freq='D')",
        // A DataFrame shows as a display (its HTML kept), its text the repr.
        "pd.DataFrame({'city': ['Oslo', 'Lima'], 'temp': [3.5, 19.0]})",
        // Past display.max_rows: pandas' own cut, and the shape line.
        "pd.DataFrame({'a': range(100), 'b': [i / 7 for i in range(100)]})",
        "pd.Series(range(100), name='n')",
        // Wider than a notebook's 20 columns: cut in the middle, as there.
        "pd.DataFrame([range(30)] * 3, columns=[f'c{i}' for i in range(30)])",
        "np.arange(12)",
        "np.arange(12).reshape(3, 4) / 7",
        "np.float64(2.5)",
        // Through IPython itself: containers it breaks over lines its own way.
        "{'a': np.arange(3), 'b': np.arange(6).reshape(2, 3) * 1.5}",
        "{f'key{i}': list(range(i * 3)) for i in range(12)}",
        "list(range(100))",
        "[{'id': i, 'name': 'n' * i} for i in range(10)]",
        "datetime.datetime(2024, 5, 1, 12, 30)",
        "datetime.date(2024, 5, 1)",
        "pd.Timestamp('2024-05-01 12:30', tz='UTC')",
        "(datetime.timedelta(hours=3), pd.Timedelta('1 day'))",
    ] {
        let (r, shown, expected) = shown_and_ipython(&h, expr).await;
        assert_eq!(
            shown, expected,
            "{expr}: the echo differs from IPython's text; the cell said:\n{}",
            r.text
        );
    }

    // A Jupyter kernel's pandas shows 20 of 30 columns (a terminal's would
    // fit 80 characters): the middle ones are `...`, and the shape says so.
    let (_, shown, _) =
        shown_and_ipython(&h, "pd.DataFrame([range(30)] * 3, columns=[f'c{i}' for i in range(30)])").await;
    assert!(shown.contains("c9  ...  c20") && shown.ends_with("[3 rows x 30 columns]"), "{shown}");

    // A table past the echo's cap keeps its shape line, and says what was cut.
    py(&h, "pd.set_option('display.max_rows', 1000)\npd.set_option('display.min_rows', 1000)").await;
    let (r, shown, expected) =
        shown_and_ipython(&h, "pd.DataFrame({'a': range(3000), 'b': [i / 7 for i in range(3000)]})").await;
    assert!(expected.len() > 16 * 1024, "the table is longer than the cap: {} characters", expected.len());
    assert!(shown.len() < expected.len() && shown.len() <= 16 * 1024 + 200, "{} characters", shown.len());
    let last = expected.lines().last().unwrap();
    assert!(shown.ends_with(&format!("; the last line follows)\n{last}")), "{}", common::tail(&shown, 300));
    assert!(r.text.contains("lines cut here"), "the cut is said");
    let kept = shown.rsplitn(3, '\n').nth(2).unwrap();
    assert!(expected.starts_with(&format!("{kept}\n")), "whole lines of the table before the cut");
    let data = r.data.unwrap();
    assert!(data["displays"][0]["html"].as_str().unwrap().contains("<table"), "the HTML form is kept");
}

#[tokio::test]
async fn without_ipython_echoes_come_from_pprint_and_keep_the_footer() {
    require_ipython();
    let h = Harness::new(&[]);
    let nested = "{f'key{i}': list(range(i * 3)) for i in range(12)}";
    // IPython is loaded first: the driver tries the import again at each
    // echo, so blocking it later still reaches the fallback.
    let (_, shown, with_ipython) = shown_and_ipython(&h, nested).await;
    assert_eq!(shown, with_ipython);
    py(&h, "import sys\nsys.modules['IPython'] = None\nimport pandas as pd\ns = pd.Series([1.5, 2.0], name='revenue')")
        .await;
    let r = py(&h, "s").await;
    assert!(r.text.ends_with("Name: revenue, dtype: float64"), "{}", r.text);
    let r = py(&h, "{'revenue': s}").await;
    assert!(r.text.ends_with("Name: revenue, dtype: float64}"), "inside a dict too: {}", r.text);
    let echo =
        py(&h, &format!("_v = {nested}\n_v")).await.data.unwrap()["echo"].as_str().unwrap().to_string();
    let pprinted =
        py(&h, "import json, pprint\nprint(json.dumps(pprint.pformat(_v, width=79, sort_dicts=False)))")
            .await;
    let pprinted: String = serde_json::from_str(&pprinted.text).expect("pprint's text, as JSON");
    assert_eq!(echo, pprinted, "the fallback is pprint's");
    assert_ne!(echo, with_ipython, "and not IPython's (which indents nested lists by one)");
    // Nested deeper than pprint recurses, or too long for it: the repr,
    // never an error for a cell that ran.
    let r = py(
        &h,
        "sys.setrecursionlimit(1000)\ndeep = []\nat = deep\nfor i in range(600):\n    at.append([i, 'a' * 50])\n    at = at[-1]\ndeep",
    )
    .await;
    assert!(!r.is_error && r.text.starts_with("Out: [[0, 'aaaa"), "{}", r.text);
    let r = py(&h, "list(range(100_000))").await;
    assert!(
        !r.is_error && r.text.starts_with("Out: [0, 1, 2, 3,"),
        "one line, as repr: {}",
        common::head(&r.text, 80)
    );
}

mod base64_check {
    /// Whether `b64` decodes to bytes starting with the PNG signature.
    pub fn png_magic(b64: &str) -> bool {
        let alphabet = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        let vals: Vec<u8> =
            b64.bytes().take(12).map(|c| alphabet.iter().position(|&a| a == c).unwrap() as u8).collect();
        let mut out = Vec::new();
        for chunk in vals.chunks(4) {
            let n = chunk.iter().fold(0u32, |acc, &v| (acc << 6) | u32::from(v));
            out.extend_from_slice(&[(n >> 16) as u8, (n >> 8) as u8, n as u8]);
        }
        out.starts_with(&[0x89, b'P', b'N', b'G', b'\r', b'\n', 0x1a, b'\n'])
    }
}

#[tokio::test]
async fn magics_are_rewritten_but_never_inside_strings() {
    let h = Harness::new(&[("sub/marker.txt", "here\n")]);
    let r = py(&h, "!echo from the shell").await;
    assert_eq!(r.text, "from the shell");
    let r = py(&h, "files = !ls sub\nfiles").await;
    assert_eq!(r.text, "Out: ['marker.txt']");
    let r = py(&h, "%%bash\necho one\necho two >&2").await;
    assert_eq!(r.text, "one\ntwo");
    let r = py(&h, "%cd sub\nimport os\nos.path.basename(os.getcwd())").await;
    assert!(r.text.ends_with("Out: 'sub'"), "{}", r.text);
    py(&h, "%cd ..").await;
    let r = py(&h, "%timeit sum(range(10))").await;
    assert!(r.text.contains("loops, best of 5:"), "{}", r.text);
    let r = py(&h, "%%timeit\nsum(range(10))").await;
    assert!(r.text.contains("per loop"), "{}", r.text);
    let r = py(&h, "s = '''\n!echo not a command\n%cd nowhere\n'''\ns.split()").await;
    assert_eq!(r.text, "Out: ['!echo', 'not', 'a', 'command', '%cd', 'nowhere']");
    // Inside brackets or after a backslash a line continues a statement:
    // `% 7` there is the modulo operator, `!= 3` a comparison.
    let r = py(&h, "n = (100\n     % 7)\nok = (n\n      != 3)\nm = 50 \\\n    % 9\n(n, ok, m)").await;
    assert_eq!(r.text, "Out: (2, True, 5)");
    // A magic's own brackets do not carry over to the next line.
    let r = py(&h, "!echo '(unclosed'\n!echo next").await;
    assert_eq!(r.text, "(unclosed\nnext");
}

/// A cell that writes a minimal wheel of `tetherdemo` (no build tools needed, works offline).
const MAKE_WHEEL: &str = r#"import zipfile
def make_wheel(version, value):
    name = f"tetherdemo-{version}-py3-none-any.whl"
    info = f"tetherdemo-{version}.dist-info"
    with zipfile.ZipFile(name, "w") as z:
        z.writestr("tetherdemo.py", f"VERSION = {value}\n")
        z.writestr(f"{info}/METADATA", f"Metadata-Version: 2.1\nName: tetherdemo\nVersion: {version}\n")
        z.writestr(f"{info}/WHEEL", "Wheel-Version: 1.0\nGenerator: tether-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        z.writestr(f"{info}/RECORD", f"tetherdemo.py,,\n{info}/METADATA,,\n{info}/WHEEL,,\n{info}/RECORD,,\n")
    return name
"#;

#[tokio::test]
async fn pip_installs_offline_and_the_next_import_sees_the_new_version() {
    let h = Harness::new(&[]);
    py(&h, MAKE_WHEEL).await;
    py(
        &h,
        "make_wheel('1.0', 1)
make_wheel('2.0', 2)
None",
    )
    .await;
    let r = py(&h, "%pip install --no-index --quiet ./tetherdemo-1.0-py3-none-any.whl").await;
    assert!(!r.is_error, "{}", r.text);
    assert_eq!(py(&h, "import tetherdemo\ntetherdemo.VERSION").await.text, "Out: 1");
    // Quoted as in a shell.
    let r = py(&h, "%pip install --no-index --quiet \"./tetherdemo-2.0-py3-none-any.whl\"").await;
    assert!(!r.is_error, "{}", r.text);
    assert_eq!(
        py(&h, "import tetherdemo\ntetherdemo.VERSION").await.text,
        "Out: 2",
        "sys.modules was evicted"
    );
    py(&h, "%pip uninstall --yes --quiet tetherdemo").await;
    // A failing pip is an error cell with pip's own last lines, not a success.
    let r = py(&h, "%pip install --no-index ./no-such-package-1.0-py3-none-any.whl").await;
    assert!(r.is_error, "{}", r.text);
    assert!(
        r.text.contains(
            "PipFailed: pip install --no-index ./no-such-package-1.0-py3-none-any.whl exited with status 1:"
        ) && r.text.contains("no-such-package-1.0-py3-none-any.whl"),
        "{}",
        r.text
    );
    assert_eq!(py(&h, "1 + 1").await.text, "Out: 2", "the kernel goes on");
}

#[tokio::test]
async fn javascript_state_echo_errors_and_await() {
    require_node();
    let h = Harness::new(&[]);
    let r = js(&h, "let total = 40\nconsole.log('hello')\nconsole.error('to stderr')\ntotal + 2").await;
    assert!(!r.is_error, "{}", r.text);
    assert_eq!(r.text, "hello\nto stderr\nOut: 42");
    assert_eq!(js(&h, "let total = 1\ntotal").await.text, "Out: 1", "a cell can be run again");
    let r = js(&h, "require('fs').writeSync(1, 'fd one\\n')\n'done'").await;
    assert_eq!(r.text, "fd one\nOut: 'done'");
    let r = js(&h, "function f() { throw new TypeError('bad input') }\nf()").await;
    assert!(r.is_error);
    assert!(r.text.contains("TypeError: bad input") && r.text.contains("cell"), "{}", r.text);
    let r = js(&h, "const v = await Promise.resolve(6)\nv * 7").await;
    assert_eq!(r.text, "Out: 42", "top-level await");
    assert_eq!(js(&h, "v + total").await.text, "Out: 7", "declarations in awaited cells persist");
    let r = js(&h, "display({a: 1})\nundefined").await;
    assert_eq!(r.text, "{ a: 1 }");
}

#[tokio::test]
async fn a_rejection_nothing_handled_is_the_cells_error_and_the_interpreter_stays() {
    require_node();
    let h = Harness::new(&[("esm/answer.mjs", "export const answer = 41;\n")]);
    let r = js(&h, "var kept = 7; Promise.reject(new Error('boom')); 5").await;
    assert!(r.is_error, "{}", r.text);
    assert!(r.text.contains("Uncaught (in promise) Error: boom"), "{}", r.text);
    assert!(r.text.contains("the interpreter and its state are kept"), "{}", r.text);
    assert_eq!(js(&h, "kept").await.text, "Out: 7", "the interpreter lived on");
    // One that comes after its cell ended is said with the next cell.
    js(&h, "setTimeout(() => Promise.reject(new Error('late')), 10); 1").await;
    std::thread::sleep(std::time::Duration::from_millis(300));
    let r = js(&h, "kept + 1").await;
    assert!(r.text.starts_with("Out: 8"), "{}", r.text);
    assert!(
        r.text.contains("after cell 3 ended, a promise was rejected and nothing handled it: Error: late"),
        "{}",
        r.text
    );
}

#[tokio::test]
async fn es_modules_load_with_dynamic_import() {
    require_node();
    let h = Harness::new(&[("esm/answer.mjs", "export const answer = 41;\n")]);
    let r = js(&h, "const m = await import('./esm/answer.mjs')\nconst path = await import('node:path')\nm.answer + path.sep.length").await;
    assert_eq!(r.text, "Out: 42", "{}", r.text);
    // From a cell without `await` too; no warning reaches the output.
    let r = js(&h, "var loading = import('./esm/answer.mjs')\n1").await;
    assert_eq!(r.text, "Out: 1", "{}", r.text);
    assert_eq!(js(&h, "(await loading).answer").await.text, "Out: 41");
}

#[tokio::test]
async fn the_bridge_reaches_host_tools_with_the_cells_surface_and_approval() {
    let h = Harness::new(&[("notes.txt", "remember the milk\n"), ("app.py", "print(1)\nprint(2)\n")]);
    let r = py(&h, "t = tool('read', {'path': 'notes.txt'})\nprint(t.strip())\nt.data['bytes']").await;
    assert_eq!(r.text, "remember the milk\nOut: 18", "{}", r.text);
    let r = py(
        &h,
        "hits = tool('ast_grep', {'pattern': 'print($A)', 'language': 'python'})\nlen(hits.data['matches'])",
    )
    .await;
    assert_eq!(r.text, "Out: 2");
    let r = py(&h, "try:\n    tool('eval', {'code': '1', 'description': 'a nested cell is refused here'})\nexcept ToolError as e:\n    print(e)").await;
    assert!(r.text.contains("`eval` cannot be called from inside a cell"), "{}", r.text);
    let r = py(&h, "tool('read', {'path': '../outside'})").await;
    assert!(
        r.is_error && r.text.contains("ToolError") && r.text.contains("outside the working directory"),
        "{}",
        r.text
    );

    require_node();
    let r = js(&h, "const t = await tool('read', {path: 'notes.txt'})\nt.text.trim()").await;
    assert_eq!(r.text, "Out: 'remember the milk'");
    let r = js(&h, "try { await tool('debug', {}) } catch (e) { console.log(e.message) }").await;
    assert!(r.text.contains("`debug` cannot be called from inside a cell"), "{}", r.text);

    let denied = Harness::with(&[], |b| b.connect_all().approval(ApprovalPolicy::Deny));
    // eval itself is exec-level and denied too: the same gate for every call.
    let text = denied.err("eval", json!({"code": "1", "description": D})).await;
    assert!(text.contains("approval policy denies"), "{text}");
}

#[tokio::test]
async fn a_write_through_the_bridge_passes_the_same_gate_as_a_direct_call() {
    /// Approves eval (exec) but not write: the bridge must not bypass it.
    struct Gate;
    impl ToolHandler for Gate {
        fn spec(&self) -> ToolSpec {
            ToolSpec {
                name: "write".into(),
                level: Level::Write,
                parallel_safe: false,
                description: "denied".into(),
                input_schema: json!({}),
                ..ToolSpec::default()
            }
        }
        fn call(&self, _: &CallContext, _: Value) -> Result<ToolFuture, ToolError> {
            Err(ToolError::new("write refused by the host's policy"))
        }
    }
    let h = Harness::with(&[], |b| b.connect_all().tool(Arc::new(Gate)));
    let r = py(&h, "tool('write', {'path': 'x.txt', 'content': 'no'})").await;
    assert!(r.is_error && r.text.contains("write refused by the host's policy"), "{}", r.text);
    assert!(!h.path("x.txt").exists());
    // And a write the run allows goes through the shared lane without waiting behind the cell.
    let h = Harness::new(&[]);
    let r = py(&h, "tool('write', {'path': 'y.txt', 'content': 'yes'})\nopen('y.txt').read()").await;
    assert_eq!(r.text, "Out: 'yes'");
}

/// A host tool that takes a while: the cell waits on it longer than its idle budget.
struct Slow;

impl ToolHandler for Slow {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "slow".into(),
            level: Level::Read,
            parallel_safe: true,
            description: "sleeps".into(),
            input_schema: json!({}),
            ..ToolSpec::default()
        }
    }
    fn call(&self, _: &CallContext, _: Value) -> Result<ToolFuture, ToolError> {
        Ok(Box::pin(async {
            tokio::time::sleep(Duration::from_secs(3)).await;
            ToolResult::text("slept")
        }))
    }
}

#[tokio::test]
async fn tool_calls_a_cell_did_not_wait_for_are_said_to_be_cancelled() {
    require_node();
    let h = Harness::with(&[], |b| b.connect_all().tool(Arc::new(Slow)));
    // Not awaited: the cell ends while the call runs.
    let r = js(&h, "tool('slow', {}).catch(() => {}); 'left it'").await;
    assert!(r.text.starts_with("Out: 'left it'"), "{}", r.text);
    assert!(
        r.text.contains("1 tool call(s) the cell started were still running when it ended"),
        "{}",
        r.text
    );
}

#[tokio::test]
async fn the_idle_budget_interrupts_but_keeps_state_and_pauses_for_bridge_calls() {
    let h = Harness::with(&[], |b| b.connect_all().tool(Arc::new(Slow)));
    py(&h, "x = 'kept'").await;
    let r = h
        .call("eval", json!({"code": "while True:\n    pass", "description": D, "idle_timeout_seconds": 1}))
        .await;
    assert!(r.is_error);
    assert!(
        r.text.contains("KeyboardInterrupt: interrupted") && r.text.contains("state are kept"),
        "{}",
        r.text
    );
    assert_eq!(py(&h, "x").await.text, "Out: 'kept'", "the interpreter survived the interrupt");

    let r = h
        .call("eval", json!({"code": "str(tool('slow', {}))", "description": D, "idle_timeout_seconds": 1}))
        .await;
    assert_eq!(r.text, "Out: 'slept'", "a pending bridge call suspends the idle clock");

    require_node();
    js(&h, "var kept = 'js state'").await;
    let r = h.call("eval", json!({"code": "while (true) {}", "language": "javascript", "description": D, "idle_timeout_seconds": 1})).await;
    assert!(r.is_error && r.text.contains("state are kept"), "{}", r.text);
    assert_eq!(js(&h, "kept").await.text, "Out: 'js state'");
}

#[tokio::test]
async fn a_cancelled_cell_is_interrupted_and_the_answer_says_the_state_is_kept() {
    let h = Harness::new(&[]);
    py(&h, "x = 'kept'").await;
    let cell = json!({"code": "import time\nprint('started', flush=True)\ntime.sleep(60)", "description": D});
    let (r, answered_after) = h.cancelled_after("eval", cell, Duration::from_secs(2)).await;
    // The kernel answers for itself (within the router's grace), so the
    // model learns the cell was interrupted and nothing was lost.
    assert!(r.is_error, "{}", r.text);
    assert!(
        r.text.contains("started")
            && r.text.contains("the cell was interrupted; the kernel and its state are kept"),
        "{}",
        r.text
    );
    assert!(answered_after < tether::router::CANCEL_GRACE, "answered within the grace");
    assert_eq!(py(&h, "x").await.text, "Out: 'kept'");
}

#[tokio::test]
async fn interpreter_death_is_reported_and_the_next_cell_starts_fresh() {
    let h = Harness::new(&[]);
    let pid = py(&h, "import os\nkept = 1\nos.getpid()")
        .await
        .text
        .trim_start_matches("Out: ")
        .parse::<i32>()
        .unwrap();
    let r = py(&h, "import os\nos._exit(3)").await;
    assert!(r.is_error && r.text.contains("the python interpreter died (exit status 3)"), "{}", r.text);
    assert!(common::gone(pid).await, "the dead interpreter {pid} is gone");
    let r = py(&h, "'kept' in globals()").await;
    assert!(r.text.starts_with("Out: False"), "{}", r.text);
    assert!(r.text.contains("earlier state was reset"), "{}", r.text);
    // A crash in C code says where it happened in the cell.
    let r = py(&h, "import ctypes\n\nctypes.string_at(0)").await;
    assert!(r.text.contains("killed by signal 11 (a segmentation fault)"), "{}", r.text);
    assert!(r.text.contains("Fatal Python error: Segmentation fault"), "{}", r.text);
    assert!(r.text.contains("File \"<cell ") && r.text.contains("line 3 in <module>"), "{}", r.text);
    let r = py(&h, "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)").await;
    assert!(r.text.contains("killed by signal 9"), "{}", r.text);
    assert_eq!(py(&h, "1").await.text.lines().next(), Some("Out: 1"));
    let kernel = common::node_of(&h, "kernel").await;
    assert_eq!(kernel["restarts"], 3, "{kernel}");
    assert_eq!(kernel["owner"], "test", "{kernel}");
    assert!(kernel["last_error"].as_str().unwrap().contains("killed by signal 9"), "{kernel}");
}

#[tokio::test]
async fn a_forked_child_never_answers_for_the_kernel() {
    let h = Harness::new(&[]);
    let code = "import os\nchild = os.fork()\nif child == 0:\n    print('from the child')\n    raise SystemExit(0)\nos.waitpid(child, 0)\nchild";
    // Bounded: a child that carried the driver on would hang the parent's wait.
    let r = h.call("eval", json!({"code": code, "description": D, "idle_timeout_seconds": 20})).await;
    assert!(!r.is_error && r.text.contains("from the child"), "{}", r.text);
    let child: i32 = r.text.rsplit("Out: ").next().unwrap().trim().parse().unwrap();
    assert!(common::gone(child).await, "the child {child} ended");
    // The next cells get their own answers.
    assert_eq!(py(&h, "1 + 1").await.text, "Out: 2");
    assert_eq!(py(&h, "'third'").await.text, "Out: 'third'");
}

#[tokio::test]
async fn a_broken_string_in_an_answer_does_not_lose_the_answer() {
    let h = Harness::new(&[]);
    // A lone surrogate: escaped as `\ud83d` by the driver, refused by strict
    // JSON readers. Bounded: a lost answer would wait out the idle budget.
    let code = "raise ValueError('half an emoji: ' + '\\ud83d')";
    let r = h.call("eval", json!({"code": code, "description": D, "idle_timeout_seconds": 20})).await;
    assert!(r.is_error && r.text.contains("ValueError: half an emoji: \u{fffd}"), "{}", r.text);
    assert_eq!(py(&h, "'next'").await.text, "Out: 'next'");
}

#[tokio::test]
async fn the_kernel_outlives_a_stray_interrupt_and_an_exception_that_cannot_be_printed() {
    let h = Harness::new(&[]);
    py(&h, "kept = 7").await;
    // An exception whose own text raises.
    let r = py(
        &h,
        "class Odd(Exception):\n    def __str__(self):\n        raise RuntimeError('no text')\nraise Odd()",
    )
    .await;
    assert!(r.is_error && r.text.contains("Odd"), "{}", r.text);
    // A SIGINT that lands between cells (a timer the cell left).
    let armed = "import os, signal, threading\nthreading.Timer(0.3, lambda: os.kill(os.getpid(), signal.SIGINT)).start()\n'armed'";
    assert_eq!(py(&h, armed).await.text, "Out: 'armed'");
    tokio::time::sleep(std::time::Duration::from_millis(1200)).await;
    let r = py(&h, "kept").await;
    assert_eq!(r.text, "Out: 7", "the same kernel, its state kept");
}

#[tokio::test]
async fn a_huge_error_message_is_cut_and_says_so() {
    require_node();
    let h = Harness::new(&[]);
    let r = py(&h, "raise ValueError('x' * 1_000_000)").await;
    assert!(r.is_error && r.text.len() < 40_000, "{} characters", r.text.len());
    assert!(r.text.contains("more characters cut"), "the cut is said");
    let r = js(&h, "throw new Error('y'.repeat(1000000))").await;
    assert!(r.is_error && r.text.len() < 40_000, "{} characters", r.text.len());
    assert!(r.text.contains("more characters cut"), "the cut is said");
}

#[tokio::test]
async fn output_that_arrives_between_cells_is_said_apart() {
    let h = Harness::new(&[]);
    let armed =
        "import threading\nthreading.Timer(0.3, lambda: print('late line', flush=True)).start()\n'armed'";
    assert_eq!(py(&h, armed).await.text, "Out: 'armed'");
    tokio::time::sleep(std::time::Duration::from_millis(1200)).await;
    let r = py(&h, "'b'").await;
    assert!(r.text.starts_with("Out: 'b'"), "not mixed into this cell's output: {}", r.text);
    assert!(r.text.contains("not this cell's: late line"), "{}", r.text);
}

#[tokio::test]
async fn a_character_split_between_reads_stays_whole() {
    require_node();
    let h = Harness::new(&[]);
    // 3-byte characters past the 64 KiB forwarded: reads and the cut fall
    // inside characters.
    for r in [py(&h, "print('€' * 30000)").await, js(&h, "console.log('€'.repeat(30000))").await] {
        assert!(r.text.starts_with("€€€"), "{}", common::head(&r.text, 40));
        assert!(!r.text.contains('\u{fffd}'), "no replacement character where a read split a character");
    }
}

#[tokio::test]
async fn reset_discards_the_interpreter() {
    let h = Harness::new(&[]);
    py(&h, "gone = 1").await;
    // A child that left the kernel's process group (a new session).
    let child: i32 =
        py(&h, "import subprocess\nsubprocess.Popen(['sleep', '300'], start_new_session=True).pid")
            .await
            .text
            .trim_start_matches("Out: ")
            .parse()
            .unwrap();
    let r = h.call("eval", json!({"code": "'gone' in globals()", "description": D, "reset": true})).await;
    assert!(r.text.starts_with("Out: False") && r.text.contains("reset"), "{}", r.text);
    assert!(common::gone(child).await, "the kernel's detached child {child} went with it");
}

#[tokio::test]
async fn bad_arguments_are_clear_errors() {
    let h = Harness::new(&[]);
    let cases = [
        (json!({"code": "1", "description": "too short"}), "`description` has 2 words"),
        (
            json!({"code": "1", "description": "one two three four five six seven eight nine ten eleven"}),
            "has 11 words",
        ),
        (json!({"code": "1", "description": D, "language": "ruby"}), "`language`"),
        (json!({"code": "1", "description": D, "idle_timeout_seconds": 0}), "`idle_timeout_seconds`"),
        (json!({"description": D}), "missing field `code`"),
    ];
    for (args, needle) in cases {
        let text = h.err("eval", args.clone()).await;
        assert!(text.contains(needle), "{args}: {text}");
    }
    let r = py(&h, "%nosuchmagic").await;
    assert!(r.is_error && r.text.contains("not supported"), "{}", r.text);
}

#[tokio::test]
async fn the_kernel_starts_through_the_enclosure_when_the_run_has_one() {
    let enclosure = vec!["env".to_string(), "TETHER_ENCLOSED=yes".to_string()];
    let h = Harness::with(&[], |b| b.connect_all().enclosure(enclosure));
    let r =
        py(&h, "import os\nos.environ.get('TETHER_ENCLOSED'), os.getcwd() == os.path.realpath('.')").await;
    assert_eq!(r.text, "Out: ('yes', True)", "started through the prefix, in the working directory");
    let kernel = common::node_of(&h, "kernel").await;
    assert_eq!(kernel["detail"]["enclosure"], "env TETHER_ENCLOSED=yes");
}

#[tokio::test]
async fn a_conversation_can_have_its_own_enclosure() {
    let h = Harness::new(&[]);
    let boxed = vec!["env".to_string(), "TETHER_ENCLOSED=boxed".to_string()];
    h.rt.open_conversation_in("boxed", boxed.clone()).unwrap();
    let code = json!({"code": "import os\nos.environ.get('TETHER_ENCLOSED', 'none')", "description": D});
    let inside = h.rt.call_in("boxed", "eval", code.clone()).await;
    assert_eq!(inside.text, "Out: 'boxed'", "its kernel started through its own prefix");
    let outside = h.call("eval", code).await;
    assert_eq!(outside.text, "Out: 'none'", "the run's own conversation has no enclosure");
    h.rt.open_conversation_in("boxed", boxed).expect("the same enclosure again is fine");
    let other = h.rt.open_conversation_in("boxed", vec!["env".into()]).unwrap_err();
    assert!(other.contains("already open with another enclosure"), "{other}");
}
