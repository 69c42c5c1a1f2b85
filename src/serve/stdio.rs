//! The stdio transport, with JSON-RPC's answer to a line that is not JSON.
//!
//! rmcp skips such a line without a word, and its client waits for an
//! answer that never comes; JSON-RPC 2.0 answers it with a parse error
//! (`-32700`) whose `id` is null. Lines from stdin are read here: the ones
//! that are JSON go on to rmcp, the others are answered. rmcp's own output
//! and those answers reach stdout through one writer, a whole line at a
//! time, so they never interleave.

use serde_json::json;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, DuplexStream};
use tokio::sync::mpsc;

/// Bytes in flight between the pipes and rmcp.
const PIPE_BUFFER: usize = 256 * 1024;
/// JSON-RPC's code for input that is not JSON.
pub const PARSE_ERROR: i64 = -32700;

/// The transport over this process's stdin and stdout.
pub fn transport() -> (DuplexStream, DuplexStream) {
    over(tokio::io::stdin(), tokio::io::stdout())
}

/// The transport over `input` and `output`: the halves rmcp reads from
/// and writes to.
pub fn over(
    input: impl AsyncRead + Unpin + Send + 'static,
    output: impl AsyncWrite + Unpin + Send + 'static,
) -> (DuplexStream, DuplexStream) {
    let (rmcp_reads, mut to_rmcp) = tokio::io::duplex(PIPE_BUFFER);
    let (rmcp_writes, from_rmcp) = tokio::io::duplex(PIPE_BUFFER);
    let (answers, mut answered) = mpsc::unbounded_channel::<String>();
    tokio::spawn(async move {
        let mut lines = BufReader::new(input).lines();
        // stdin's end (or a read error) ends rmcp's input: the run ends.
        while let Ok(Some(line)) = lines.next_line().await {
            if line.trim().is_empty() {
                continue;
            }
            match serde_json::from_str::<serde_json::Value>(&line) {
                Ok(_) => {
                    if to_rmcp.write_all(format!("{line}\n").as_bytes()).await.is_err() {
                        break;
                    }
                }
                Err(e) => {
                    let error = json!({
                        "jsonrpc": "2.0",
                        "id": null,
                        "error": {"code": PARSE_ERROR, "message": format!("Parse error: the line is not JSON ({e})")},
                    });
                    let _ = answers.send(error.to_string());
                }
            }
        }
        let _ = to_rmcp.shutdown().await;
    });
    tokio::spawn(async move {
        let mut output = output;
        let mut from_rmcp = BufReader::new(from_rmcp).lines();
        let (mut rmcp_open, mut answers_open) = (true, true);
        loop {
            let line = tokio::select! {
                line = from_rmcp.next_line(), if rmcp_open => match line {
                    Ok(Some(line)) => line,
                    _ => {
                        rmcp_open = false;
                        continue;
                    }
                },
                answer = answered.recv(), if answers_open => match answer {
                    Some(answer) => answer,
                    None => {
                        answers_open = false;
                        continue;
                    }
                },
                else => break,
            };
            let written = output.write_all(format!("{line}\n").as_bytes()).await;
            if written.is_err() || output.flush().await.is_err() {
                break;
            }
        }
    });
    (rmcp_reads, rmcp_writes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    #[tokio::test]
    async fn a_line_that_is_not_json_is_answered_and_json_goes_on() {
        let (client, server_in) = tokio::io::duplex(4096);
        let (server_out, mut client_reads) = tokio::io::duplex(4096);
        let (mut rmcp_reads, mut rmcp_writes) = over(server_in, server_out);
        let (_, mut client_writes) = tokio::io::split(client);
        client_writes
            .write_all(b"{bad json\n{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n")
            .await
            .unwrap();
        drop(client_writes);
        let mut passed = String::new();
        rmcp_reads.read_to_string(&mut passed).await.unwrap();
        assert_eq!(passed, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n", "only JSON reaches rmcp");
        rmcp_writes.write_all(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n").await.unwrap();
        drop(rmcp_writes);
        let mut out = String::new();
        client_reads.read_to_string(&mut out).await.unwrap();
        let lines: Vec<serde_json::Value> = out.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        assert_eq!(lines.len(), 2, "{out}");
        let error = lines.iter().find(|l| l.get("error").is_some()).expect("a parse error");
        assert_eq!((error["id"].clone(), error["error"]["code"].clone()), (json!(null), json!(PARSE_ERROR)));
        assert!(lines.iter().any(|l| l["id"] == 1 && l.get("result").is_some()), "{out}");
    }
}
