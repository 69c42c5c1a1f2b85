//! What a tool declares about itself, and who may see it.
//!
//! Levels decide visibility, not just approval (S2): the read-only surface —
//! plan mode, read-only sub-agents — has no write- or exec-level tool in its
//! schema at all. Parallel safety decides routing: a tool that is not
//! parallel-safe runs through the router's single serial lane.

use serde::Serialize;

/// What a tool may do, which decides the surfaces that see it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Level {
    /// No side effects.
    Read,
    /// Changes files.
    Write,
    /// Starts or controls a process.
    Exec,
}

impl Level {
    /// The level's name as tools and errors spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Read => "read",
            Level::Write => "write",
            Level::Exec => "exec",
        }
    }

    /// "a read-level tool", "an exec-level tool": the level with its article.
    pub fn a_tool(self) -> &'static str {
        match self {
            Level::Read => "a read-level tool",
            Level::Write => "a write-level tool",
            Level::Exec => "an exec-level tool",
        }
    }
}

/// Who is calling, which decides the tools they see.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Surface {
    /// The main agent: every level.
    #[default]
    Full,
    /// Plan mode and read-only sub-agents: read level only.
    ReadOnly,
}

impl Surface {
    /// Whether a tool of `level` is on this surface.
    pub fn allows(self, level: Level) -> bool {
        match self {
            Surface::Full => true,
            Surface::ReadOnly => level == Level::Read,
        }
    }

    /// The surface's name as the CLI spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Surface::Full => "full",
            Surface::ReadOnly => "read-only",
        }
    }
}

impl std::str::FromStr for Surface {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "full" => Ok(Surface::Full),
            "read-only" | "readonly" | "read_only" | "plan" => Ok(Surface::ReadOnly),
            other => Err(format!("`{other}` is not a surface; use `full` or `read-only`")),
        }
    }
}

/// A live resource a run may have connected; a tool is registered only
/// when its resource is (S1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Resource {
    /// The tree-sitter parser set (`ast_grep`, `ast_edit`, `resolve`).
    Parsers,
    /// The language-server supervisor (`lsp`, `lsp_rename`, diagnostics on write).
    LanguageServers,
    /// The kernel factory (`eval`).
    Kernels,
    /// The debug-session supervisor (`debug`).
    Debuggers,
}

impl Resource {
    /// Every resource tether has; a CLI run connects them all by default.
    pub const ALL: [Resource; 4] =
        [Resource::Parsers, Resource::LanguageServers, Resource::Kernels, Resource::Debuggers];

    /// The resource's name as the CLI spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Resource::Parsers => "parsers",
            Resource::LanguageServers => "lsp",
            Resource::Kernels => "kernels",
            Resource::Debuggers => "debug",
        }
    }

    /// What it is, for messages.
    pub fn describe(self) -> &'static str {
        match self {
            Resource::Parsers => "the tree-sitter parser set",
            Resource::LanguageServers => "the language-server supervisor",
            Resource::Kernels => "the kernel factory",
            Resource::Debuggers => "the debug-session supervisor",
        }
    }
}

impl std::str::FromStr for Resource {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Resource::ALL.into_iter().find(|r| r.as_str() == s).ok_or_else(|| {
            let names: Vec<&str> = Resource::ALL.iter().map(|r| r.as_str()).collect();
            format!("`{s}` is not a resource; use one of: {}", names.join(", "))
        })
    }
}

/// A tool's declaration: the router reads these instead of special-casing
/// names. Undeclared means exclusive and mutating, so a handler that is
/// unsure must say `parallel_safe: false` and a level above read.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolSpec {
    /// The name models call it by.
    pub name: String,
    /// What it may do.
    pub level: Level,
    /// Whether calls may run concurrently; if not, they go one at a time.
    pub parallel_safe: bool,
    /// What it does, for the model.
    pub description: String,
    /// JSON Schema of its arguments.
    pub input_schema: serde_json::Value,
    /// For a tool that is not parallel-safe: whether its resource already
    /// runs one call at a time in its own mailbox, so the router must not
    /// also queue it on the shared serial lane (a cell's bridge call to a
    /// write tool goes through that lane and would wait behind the cell).
    #[serde(skip)]
    pub serialized_by_resource: bool,
    /// Whether the tool passes [`crate::CallContext::cancel`] on to its
    /// resource and answers a cancelled call itself, saying what state it
    /// left (a cell interrupted with its state kept, a program left
    /// running). The router then waits up to
    /// [`crate::router::CANCEL_GRACE`] for that answer instead of replying
    /// a bare "cancelled".
    #[serde(skip)]
    pub answers_cancellation: bool,
    /// Arguments the tool list leaves out (the reference keeps them):
    /// those an answer names, with the value to pass, when they are
    /// needed — `offset` in "pass offset=50 for more", a cell's idle
    /// budget in the answer that interrupted it.
    #[serde(skip)]
    pub unlisted: Vec<&'static str>,
}

/// Undeclared means exclusive and mutating: exec level, not parallel-safe,
/// serialised by the router. Declarations name what they are and take the
/// rest from here (`..ToolSpec::default()`).
impl Default for ToolSpec {
    fn default() -> Self {
        ToolSpec {
            name: String::new(),
            level: Level::Exec,
            parallel_safe: false,
            description: String::new(),
            input_schema: serde_json::json!({"type": "object"}),
            serialized_by_resource: false,
            answers_cancellation: false,
            unlisted: Vec::new(),
        }
    }
}

impl ToolSpec {
    /// The declaration as a model's tool list carries it: the
    /// description's first paragraph and the compact schema
    /// ([`crate::schema::compact`]) without the [`unlisted`](Self::unlisted)
    /// arguments. Hosts send this; [`Self::reference`] holds the rest, and
    /// the router checks calls against the full one.
    pub fn for_model(&self) -> ToolSpec {
        let mut input_schema = crate::schema::compact(&self.input_schema);
        if let Some(props) = input_schema.get_mut("properties").and_then(|p| p.as_object_mut()) {
            for name in &self.unlisted {
                props.remove(*name);
            }
        }
        ToolSpec {
            description: crate::schema::lead(&self.description).to_string(),
            input_schema,
            ..self.clone()
        }
    }
}
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_only_surface_sees_only_read_level() {
        assert!(Surface::ReadOnly.allows(Level::Read));
        assert!(!Surface::ReadOnly.allows(Level::Write));
        assert!(!Surface::ReadOnly.allows(Level::Exec));
        assert!(Surface::Full.allows(Level::Exec));
    }

    #[test]
    fn names_parse() {
        assert_eq!("read-only".parse::<Surface>(), Ok(Surface::ReadOnly));
        assert!("root".parse::<Surface>().unwrap_err().contains("read-only"));
        assert_eq!("parsers".parse::<Resource>(), Ok(Resource::Parsers));
    }
}
