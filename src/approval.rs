//! Approval of write- and exec-level calls.

use crate::spec::ToolSpec;

/// What happens when a write- or exec-level tool is called. Read-level
/// tools never ask.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ApprovalPolicy {
    /// Run them (the host decided up front).
    #[default]
    AutoApprove,
    /// Refuse them, saying so.
    Deny,
    /// Show a permission card through the question gate first; run only
    /// on an explicit allow. With no approver connected, refuse (fail
    /// closed — never auto-approve).
    Ask,
}

impl ApprovalPolicy {
    /// `Ok` if `spec` may run without asking, or the refusal the model
    /// reads. [`ApprovalPolicy::Ask`] answers `Ok`: the router asks.
    pub fn approve(self, spec: &ToolSpec) -> Result<(), String> {
        match self {
            ApprovalPolicy::AutoApprove | ApprovalPolicy::Ask => Ok(()),
            ApprovalPolicy::Deny => Err(format!(
                "`{}` is {} and this run's approval policy denies {}-level calls; it did not run. Use read-level tools, or ask the operator to allow changes",
                spec.name,
                spec.level.a_tool(),
                spec.level.as_str()
            )),
        }
    }

    /// The policy's name as the CLI spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            ApprovalPolicy::AutoApprove => "auto",
            ApprovalPolicy::Deny => "deny",
            ApprovalPolicy::Ask => "ask",
        }
    }
}

impl std::str::FromStr for ApprovalPolicy {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "auto" | "auto-approve" => Ok(ApprovalPolicy::AutoApprove),
            "deny" => Ok(ApprovalPolicy::Deny),
            "ask" => Ok(ApprovalPolicy::Ask),
            other => Err(format!("`{other}` is not an approval policy; use `auto`, `ask` or `deny`")),
        }
    }
}
