//! A panic on purpose, for the tests that show a fault stays contained (tests/faults.rs):
//! only in a build with the `fault-injection` feature, never in one handed out. The
//! environment variable `BASALT_FAULT` says where: `main:N` makes the main search thread
//! panic once it has searched N nodes in a search, `helper:N` the first helper to get
//! there. It fires once per process, so the searches after it show the engine recovered.
//!
//! An environment variable rather than a UCI command or option: the protocol the engine
//! speaks stays the same in this build, and nothing a GUI sends can reach the hook.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::LazyLock;

/// Which thread panics, and at how many nodes of its search; `None` without the variable.
static PLAN: LazyLock<Option<(Thread, u64)>> = LazyLock::new(|| {
    let plan = std::env::var("BASALT_FAULT").ok()?;
    let parsed = plan.split_once(':').and_then(|(thread, nodes)| {
        let thread = match thread {
            "main" => Thread::Main,
            "helper" => Thread::Helper,
            _ => return None,
        };
        Some((thread, nodes.trim().parse().ok()?))
    });
    if parsed.is_none() {
        eprintln!("BASALT_FAULT={plan:?} ignored: expected main:NODES or helper:NODES");
    }
    parsed
});

static FIRED: AtomicBool = AtomicBool::new(false);

#[derive(Clone, Copy, PartialEq, Eq)]
enum Thread {
    Main,
    Helper,
}

/// Called at every node of thread `helper_id` (0: the main thread) with its node count:
/// panics there if the plan says so and has not fired yet.
pub(super) fn strike(helper_id: usize, nodes: u64) {
    let Some((thread, at)) = *PLAN else {
        return;
    };
    let this = if helper_id == 0 {
        Thread::Main
    } else {
        Thread::Helper
    };
    if this == thread && nodes >= at && !FIRED.swap(true, Ordering::Relaxed) {
        panic!("fault injected at node {nodes} (BASALT_FAULT)");
    }
}
