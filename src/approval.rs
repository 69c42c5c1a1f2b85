//! Approval of write- and exec-level calls.

use crate::spec::ToolSpec;

/// What happens when a write- or exec-level tool is called. Read-level
/// tools never ask. Asking the human arrives with the question gate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ApprovalPolicy {
    /// Run them (the host decided up front).
    #[default]
    AutoApprove,
    /// Refuse them, saying so.
    Deny,
}

impl ApprovalPolicy {
    /// `Ok` if `spec` may run, or the refusal the model reads.
    pub fn approve(self, spec: &ToolSpec) -> Result<(), String> {
        match self {
            ApprovalPolicy::AutoApprove => Ok(()),
            ApprovalPolicy::Deny => Err(format!(
                "`{}` is a {}-level tool and this run's approval policy denies {}-level calls; it did not run. Use read-level tools, or ask the operator to allow changes",
                spec.name,
                spec.level.as_str(),
                spec.level.as_str()
            )),
        }
    }

    /// The policy's name as the CLI spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            ApprovalPolicy::AutoApprove => "auto",
            ApprovalPolicy::Deny => "deny",
        }
    }
}

impl std::str::FromStr for ApprovalPolicy {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "auto" | "auto-approve" => Ok(ApprovalPolicy::AutoApprove),
            "deny" => Ok(ApprovalPolicy::Deny),
            other => Err(format!("`{other}` is not an approval policy; use `auto` or `deny`")),
        }
    }
}
