//! What a tool call returns: text the model reads first, structured data
//! for hosts and scripts, and images as separate parts.

use serde::Serialize;

/// An image part (a plot, a screenshot).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Image {
    /// MIME type, e.g. `image/png`.
    pub mime: String,
    /// The bytes, base64-encoded.
    pub base64: String,
}

/// The result of one tool call.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolResult {
    /// Whether the tool reported an error (the text says what to do next).
    pub is_error: bool,
    /// What the model reads.
    pub text: String,
    /// Structured form of the same answer, where the tool has one.
    pub data: Option<serde_json::Value>,
    /// Image parts.
    pub images: Vec<Image>,
}

impl ToolResult {
    /// A successful text result.
    pub fn text(text: impl Into<String>) -> Self {
        Self { is_error: false, text: text.into(), data: None, images: Vec::new() }
    }

    /// An error result; `text` should say what to do next.
    pub fn error(text: impl Into<String>) -> Self {
        Self { is_error: true, text: text.into(), data: None, images: Vec::new() }
    }

    /// Attaches structured data.
    pub fn with_data(mut self, data: impl Serialize) -> Self {
        self.data = serde_json::to_value(data).ok();
        self
    }

    /// Puts a line (or lines) before the text: what the rest must be read with.
    pub fn prepend(&mut self, first: &str) {
        if !first.is_empty() {
            self.text = format!("{first}\n{}", self.text);
        }
    }

    /// Appends a paragraph to the text (used by the after-write hook).
    pub fn append(&mut self, more: &str) {
        if more.is_empty() {
            return;
        }
        if !self.text.is_empty() && !self.text.ends_with('\n') {
            self.text.push('\n');
        }
        self.text.push_str(more);
    }
}
