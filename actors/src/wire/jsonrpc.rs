//! JSON-RPC 2.0 message shapes: what a peer can send us, and what we send.

use serde_json::{Value, json};

/// A request id. We always send integers; peers may use strings.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Id {
    /// Integer id.
    Num(i64),
    /// String id.
    Str(String),
}

impl Id {
    fn from_value(v: &Value) -> Option<Id> {
        match v {
            Value::Number(n) => n.as_i64().map(Id::Num),
            Value::String(s) => Some(Id::Str(s.clone())),
            _ => None,
        }
    }

    /// The id as JSON.
    pub fn to_value(&self) -> Value {
        match self {
            Id::Num(n) => json!(n),
            Id::Str(s) => json!(s),
        }
    }
}

/// An error object from a response.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct RpcError {
    /// The error code.
    pub code: i64,
    /// The message.
    pub message: String,
    /// Extra data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

/// "Method not found", the answer to a server request we do not handle.
pub const METHOD_NOT_FOUND: i64 = -32601;
/// "Request cancelled", what a peer answers after `$/cancelRequest`.
pub const REQUEST_CANCELLED: i64 = -32800;
/// "Content modified": the server dropped a request because the document changed.
pub const CONTENT_MODIFIED: i64 = -32801;

/// A message from the peer.
#[derive(Debug, Clone, PartialEq)]
pub enum Incoming {
    /// The answer to one of our requests.
    Response {
        /// Which request.
        id: Id,
        /// The result, or the error.
        result: Result<Value, RpcError>,
    },
    /// A request the peer makes of us.
    Request {
        /// Its id.
        id: Id,
        /// The method.
        method: String,
        /// The params.
        params: Value,
    },
    /// A notification.
    Notification {
        /// The method.
        method: String,
        /// The params.
        params: Value,
    },
}

impl Incoming {
    /// Classifies a parsed message; `None` if it is no JSON-RPC message.
    pub fn parse(v: Value) -> Option<Incoming> {
        let mut obj = match v {
            Value::Object(o) => o,
            _ => return None,
        };
        let method = obj.get("method").and_then(Value::as_str).map(str::to_string);
        let id = obj.get("id").and_then(Id::from_value);
        let params = obj.remove("params").unwrap_or(Value::Null);
        match (method, id) {
            (Some(method), Some(id)) => Some(Incoming::Request { id, method, params }),
            (Some(method), None) => Some(Incoming::Notification { method, params }),
            (None, Some(id)) => {
                let result = match obj.remove("error") {
                    Some(e) if !e.is_null() => Err(serde_json::from_value(e).unwrap_or(RpcError {
                        code: 0,
                        message: "malformed error object".into(),
                        data: None,
                    })),
                    _ => Ok(obj.remove("result").unwrap_or(Value::Null)),
                };
                Some(Incoming::Response { id, result })
            }
            (None, None) => None,
        }
    }
}

/// A request we send.
pub fn request(id: i64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// A notification we send.
pub fn notification(method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "method": method, "params": params})
}

/// A response we send to a peer's request.
pub fn response(id: &Id, result: Result<Value, RpcError>) -> Value {
    match result {
        Ok(result) => json!({"jsonrpc": "2.0", "id": id.to_value(), "result": result}),
        Err(error) => json!({"jsonrpc": "2.0", "id": id.to_value(), "error": error}),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_the_three_kinds() {
        let r = Incoming::parse(json!({"jsonrpc":"2.0","id":3,"result":[1]})).unwrap();
        assert_eq!(r, Incoming::Response { id: Id::Num(3), result: Ok(json!([1])) });
        let e =
            Incoming::parse(json!({"jsonrpc":"2.0","id":"x","error":{"code":-32800,"message":"cancelled"}}))
                .unwrap();
        assert!(matches!(
            e,
            Incoming::Response { result: Err(RpcError { code: REQUEST_CANCELLED, .. }), .. }
        ));
        let q =
            Incoming::parse(json!({"jsonrpc":"2.0","id":1,"method":"workspace/configuration","params":{}}))
                .unwrap();
        assert!(matches!(q, Incoming::Request { .. }));
        let n = Incoming::parse(json!({"jsonrpc":"2.0","method":"$/progress","params":{}})).unwrap();
        assert!(matches!(n, Incoming::Notification { .. }));
        assert_eq!(Incoming::parse(json!([1])), None);
    }
}
