//! What happens when things go wrong or pile up: faults injected into real
//! programs and through fakes, children that must not outlive their run,
//! load, and the hunt for wrong answers that read as complete.

mod hunt;
mod injected;
mod orphans;
mod stress;
