//! `KernelPool`: the kernels of one conversation, one per language,
//! created on the first cell of that language.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Instant;

use actix::prelude::*;

use super::KernelLang;
use super::actor::KernelActor;
use crate::describe::{ActorNode, Describe, describe_or_busy};

/// The kernel for a language (created if new).
pub struct GetKernel(pub KernelLang);

impl Message for GetKernel {
    type Result = Addr<KernelActor>;
}

/// The pool actor.
pub struct KernelPool {
    conversation: String,
    workdir: PathBuf,
    enclosure: Vec<String>,
    kernels: BTreeMap<KernelLang, Addr<KernelActor>>,
    started: Instant,
}

impl KernelPool {
    /// A pool for `conversation` in `workdir`; kernels start through `enclosure` when not empty.
    pub fn new(conversation: String, workdir: PathBuf, enclosure: Vec<String>) -> Self {
        Self { conversation, workdir, enclosure, kernels: BTreeMap::new(), started: Instant::now() }
    }
}

impl Actor for KernelPool {
    type Context = Context<Self>;
}

impl Handler<GetKernel> for KernelPool {
    type Result = MessageResult<GetKernel>;

    fn handle(&mut self, msg: GetKernel, _ctx: &mut Self::Context) -> Self::Result {
        let lang = msg.0;
        if let Some(addr) = self.kernels.get(&lang).filter(|a| a.connected()) {
            return MessageResult(addr.clone());
        }
        let (workdir, enclosure) = (self.workdir.clone(), self.enclosure.clone());
        let addr = KernelActor::new(lang, workdir, enclosure).start();
        self.kernels.insert(lang, addr.clone());
        MessageResult(addr)
    }
}

impl Handler<Describe> for KernelPool {
    type Result = ResponseFuture<ActorNode>;

    fn handle(&mut self, _msg: Describe, _ctx: &mut Self::Context) -> Self::Result {
        let mut node = ActorNode::new(
            "kernel-pool",
            &self.conversation,
            "ready",
            self.started.elapsed().as_millis() as u64,
            0,
        );
        node.owner = Some(self.conversation.clone());
        let kernels: Vec<Addr<KernelActor>> = self.kernels.values().cloned().collect();
        let owner = self.conversation.clone();
        Box::pin(async move {
            for k in kernels {
                node.children.push(describe_or_busy(&k.recipient(), "kernel").await.owned_by(&owner));
            }
            node.pending = node.children.iter().map(|k| k.pending).sum();
            node
        })
    }
}
