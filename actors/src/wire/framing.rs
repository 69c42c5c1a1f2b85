//! `Content-Length` framing, as LSP and DAP use it: headers, a blank line,
//! then exactly that many bytes of JSON.

use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncReadExt};

/// Largest message accepted; a bigger `Content-Length` is a protocol error,
/// not an allocation.
pub const MAX_MESSAGE_BYTES: usize = 64 * 1024 * 1024;

/// Longest header line accepted.
const MAX_HEADER_LINE: usize = 8 * 1024;

/// A malformed frame.
#[derive(Debug, thiserror::Error)]
pub enum FramingError {
    /// The stream failed.
    #[error("reading the stream failed: {0}")]
    Io(#[from] std::io::Error),
    /// A header was not `Name: value`, or Content-Length was missing or bad.
    #[error("malformed header {0:?}")]
    BadHeader(String),
    /// The message is larger than [`MAX_MESSAGE_BYTES`].
    #[error("message of {0} bytes exceeds the {MAX_MESSAGE_BYTES}-byte limit")]
    TooLarge(usize),
    /// The stream ended inside a message.
    #[error("the stream ended inside a message")]
    Truncated,
}

/// Reads one framed message body. `Ok(None)` is a clean end of stream
/// between messages.
pub async fn read_message<R: AsyncBufRead + Unpin>(reader: &mut R) -> Result<Option<Vec<u8>>, FramingError> {
    let mut length: Option<usize> = None;
    let mut line = String::new();
    let mut first = true;
    loop {
        line.clear();
        let n = (&mut *reader).take(MAX_HEADER_LINE as u64).read_line(&mut line).await?;
        if n == 0 {
            return if first { Ok(None) } else { Err(FramingError::Truncated) };
        }
        first = false;
        let header = line.trim_end_matches(['\r', '\n']);
        if header.is_empty() {
            if length.is_some() {
                break;
            }
            // Tolerate stray blank lines between messages.
            first = true;
            continue;
        }
        let Some((name, value)) = header.split_once(':') else {
            return Err(FramingError::BadHeader(header.to_string()));
        };
        if name.trim().eq_ignore_ascii_case("content-length") {
            let n: usize = value.trim().parse().map_err(|_| FramingError::BadHeader(header.to_string()))?;
            if n > MAX_MESSAGE_BYTES {
                return Err(FramingError::TooLarge(n));
            }
            length = Some(n);
        }
    }
    let length = length.unwrap_or(0);
    let mut body = vec![0; length];
    reader.read_exact(&mut body).await.map_err(|e| match e.kind() {
        std::io::ErrorKind::UnexpectedEof => FramingError::Truncated,
        _ => FramingError::Io(e),
    })?;
    Ok(Some(body))
}

/// Frames a message body.
pub fn encode(body: &[u8]) -> Vec<u8> {
    let mut out = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    out.extend_from_slice(body);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncWriteExt, BufReader};

    #[tokio::test]
    async fn round_trips_over_a_duplex_pipe() {
        let (mut a, b) = tokio::io::duplex(1024);
        let mut reader = BufReader::new(b);
        a.write_all(&encode(br#"{"x":1}"#)).await.unwrap();
        a.write_all(
            b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\nContent-Length: 2\r\n\r\n{}",
        )
        .await
        .unwrap();
        drop(a);
        assert_eq!(read_message(&mut reader).await.unwrap().unwrap(), br#"{"x":1}"#);
        assert_eq!(read_message(&mut reader).await.unwrap().unwrap(), b"{}");
        assert!(read_message(&mut reader).await.unwrap().is_none());
    }

    #[tokio::test]
    async fn malformed_frames_are_errors_that_show_the_bytes() {
        let mut reader = BufReader::new(&b"Content-Length: ten\r\n\r\n"[..]);
        let err = read_message(&mut reader).await.unwrap_err().to_string();
        assert!(err.contains("Content-Length: ten"), "{err}");
        let mut reader = BufReader::new(&b"Content-Length: 10\r\n\r\n{}"[..]);
        assert!(matches!(read_message(&mut reader).await, Err(FramingError::Truncated)));
        let mut reader = BufReader::new(&b"Content-Length: 999999999999\r\n\r\n"[..]);
        assert!(matches!(read_message(&mut reader).await, Err(FramingError::TooLarge(_))));
    }
}
