//! Router dispatch of a trivial read tool: how many calls a second one
//! runtime routes (registered? visible? approved? arguments parse? route),
//! and the per-call latency.
//!
//! The tool is a host tool that answers at once, so what is measured is the
//! router and the actor hops, not any resource. Criterion reports the
//! throughput of batches of concurrent calls; a second pass prints p50/p99
//! latency of single calls under the same load.
//!
//! Beside it, in the same run and with the same callers, a raw actix echo
//! (an actor answering a message with its own payload): the floor any
//! actor-based router stands on. The figure to watch is the ratio.
//!
//! Run: `cargo bench --bench router`.

use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group};
use serde_json::json;
use tether::{CallContext, Level, Runtime, ToolError, ToolFuture, ToolHandler, ToolResult, ToolSpec};

/// Calls in flight at once, as a host with many agents would have.
const CONCURRENCY: usize = 64;
/// Calls per measured batch.
const BATCH: usize = 4096;

/// The trivial read tool: parses its arguments and answers.
struct Ping;

#[derive(serde::Deserialize)]
struct PingArgs {
    #[allow(dead_code)]
    n: u64,
}

impl ToolHandler for Ping {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "ping".into(),
            level: Level::Read,
            parallel_safe: true,
            description: "answers at once".into(),
            input_schema: json!({"type": "object"}),
            ..ToolSpec::default()
        }
    }

    fn call(&self, _ctx: &CallContext, args: serde_json::Value) -> Result<ToolFuture, ToolError> {
        let _: PingArgs = tether::args::parse("ping", args)?;
        Ok(Box::pin(std::future::ready(ToolResult::text("pong"))))
    }
}

fn runtime() -> (tempfile::TempDir, Arc<Runtime>) {
    let dir = tempfile::tempdir().unwrap();
    let rt = Runtime::builder()
        .trust(tether::Trust::Trusted)
        .workdir(dir.path())
        .tool(Arc::new(Ping))
        .start()
        .unwrap();
    (dir, Arc::new(rt))
}

/// Runs `total` calls, `in_flight` at a time; returns each call's latency.
async fn drive(rt: &Arc<Runtime>, total: usize, in_flight: usize) -> Vec<Duration> {
    let mut tasks = Vec::with_capacity(in_flight);
    for worker in 0..in_flight {
        let rt = rt.clone();
        let share = total / in_flight + usize::from(worker < total % in_flight);
        tasks.push(tokio::spawn(async move {
            let mut latencies = Vec::with_capacity(share);
            for n in 0..share {
                let start = Instant::now();
                let r = rt.call("ping", json!({"n": n})).await;
                latencies.push(start.elapsed());
                assert!(!r.is_error, "{}", r.text);
            }
            latencies
        }));
    }
    let mut all = Vec::with_capacity(total);
    for t in tasks {
        all.extend(t.await.unwrap());
    }
    all
}

fn dispatch(c: &mut Criterion) {
    let (_dir, rt) = runtime();
    let tokio = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let mut group = c.benchmark_group("router");
    group.throughput(Throughput::Elements(BATCH as u64));
    group.bench_function("dispatch_trivial_read_tool_x64", |b| {
        b.iter_custom(|iters| {
            let start = Instant::now();
            for _ in 0..iters {
                tokio.block_on(drive(&rt, BATCH, CONCURRENCY));
            }
            start.elapsed()
        })
    });
    group.finish();
}

/// The raw actix echo: one actor on a thread of its own, answering at once.
struct Echo;

impl actix::Actor for Echo {
    type Context = actix::Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        ctx.set_mailbox_capacity(4096);
    }
}

struct Ping2(u64);

impl actix::Message for Ping2 {
    type Result = u64;
}

impl actix::Handler<Ping2> for Echo {
    type Result = actix::MessageResult<Ping2>;

    fn handle(&mut self, msg: Ping2, _ctx: &mut Self::Context) -> Self::Result {
        actix::MessageResult(msg.0)
    }
}

/// Calls per second of the router and of the raw echo, `in_flight` at a
/// time, measured back to back; each the median of `trials`.
fn ratio_report(in_flight: usize, total: usize, trials: usize) {
    let (_dir, rt) = runtime();
    let tokio = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let system = actix::System::new();
        system.block_on(async {
            let _ = tx.send(actix::Actor::start(Echo));
        });
        system.run().unwrap();
    });
    let echo = rx.recv().unwrap();
    let echo_rate = |total: usize| {
        tokio.block_on(async {
            let start = Instant::now();
            let mut tasks = Vec::new();
            for worker in 0..in_flight {
                let echo = echo.clone();
                let share = total / in_flight + usize::from(worker < total % in_flight);
                tasks.push(tokio::spawn(async move {
                    for n in 0..share {
                        assert_eq!(echo.send(Ping2(n as u64)).await.unwrap(), n as u64);
                    }
                }));
            }
            for t in tasks {
                t.await.unwrap();
            }
            total as f64 / start.elapsed().as_secs_f64()
        })
    };
    let router_rate = |total: usize| {
        let start = Instant::now();
        tokio.block_on(drive(&rt, total, in_flight));
        total as f64 / start.elapsed().as_secs_f64()
    };
    echo_rate(total / 10);
    router_rate(total / 10);
    let (mut echoes, mut routers) = (Vec::new(), Vec::new());
    for _ in 0..trials {
        echoes.push(echo_rate(total));
        routers.push(router_rate(total));
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(|a, b| a.partial_cmp(b).unwrap());
        v[v.len() / 2]
    };
    let (e, r) = (median(&mut echoes), median(&mut routers));
    println!(
        "router vs raw actix echo, {in_flight} in flight, median of {trials}: router {r:.0} calls/s, echo {e:.0} msgs/s, ratio {:.2}",
        r / e
    );
}

fn latency_report(in_flight: usize, total: usize) {
    let (_dir, rt) = runtime();
    let tokio = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    tokio.block_on(drive(&rt, total / 10, in_flight)); // warm up
    let start = Instant::now();
    let mut latencies = tokio.block_on(drive(&rt, total, in_flight));
    let wall = start.elapsed();
    latencies.sort();
    let pct = |p: f64| latencies[((latencies.len() as f64 * p) as usize).min(latencies.len() - 1)];
    println!(
        "router latency: {total} calls, {in_flight} in flight: {:.0} calls/s, p50 {:?}, p99 {:?}",
        total as f64 / wall.as_secs_f64(),
        pct(0.50),
        pct(0.99)
    );
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20).measurement_time(Duration::from_secs(10));
    targets = dispatch
}

fn main() {
    benches();
    latency_report(CONCURRENCY, 200_000);
    latency_report(1, 50_000);
    ratio_report(CONCURRENCY, 200_000, 5);
    ratio_report(1, 30_000, 5);
    Criterion::default().configure_from_args().final_summary();
}
