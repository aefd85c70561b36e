//! Scheduling priorities of the engine's threads (Linux; elsewhere these do nothing).
//!
//! Lazy SMP may run more search threads than there are free cores. The threads that answer
//! commands (the UCI thread) and decide the move (the main search thread) must then still
//! get a core at once, so helpers run at the lowest priority an unprivileged thread can
//! take, the UCI thread asks for a short time slice, and helpers yield now and then
//! (`HELPER_YIELD_INTERVAL`). docs/strength.md, "Command latency", has the measurements.

/// How much nicer helper threads run than the thread that starts them (the UCI and main
/// search threads keep the process's priority). The full 19 levels: with 5, four threads
/// on two cores still answered `stop` in 4.0 ms at the 99th percentile, with 19 in 0.9 ms.
/// Helpers also take the `SCHED_IDLE` policy: a waking thread of normal policy then
/// preempts a helper and a core running only helpers counts as free when the kernel places
/// a waking thread, so `quit` with four threads on two cores fell from 2.6 ms to 1.1-1.3 ms
/// at the median.
pub const HELPER_NICENESS: i32 = 19;
/// The largest nice value Linux has.
#[cfg(target_os = "linux")]
const MAX_NICENESS: i32 = 19;

/// The time slice the UCI thread asks for, in nanoseconds: the shortest Linux grants.
#[cfg(target_os = "linux")]
const UCI_SLICE_NS: u64 = 100_000;

/// Makes the calling thread `HELPER_NICENESS` nicer and gives it the `SCHED_IDLE` policy.
/// Returns false where that is not possible (other systems, or a sandbox that forbids it);
/// helpers then keep the priority.
#[cfg(target_os = "linux")]
pub fn lower_helper_priority() -> bool {
    // SAFETY: `getpriority` and `setpriority` take integers and read or write no memory of
    // ours, so they cannot break Rust's guarantees whatever they return. On Linux the nice
    // value is per thread and `PRIO_PROCESS` with `who = 0` names the calling thread alone
    // (setpriority(2), "Linux-specific notes"), so only this helper is affected; the test
    // `helper_priority_is_per_thread` checks exactly that. Raising the value never needs a
    // privilege. The same holds for `sched_setscheduler` with `pid = 0` (sched(7): policies
    // are per thread), which only reads `param`, a live local; moving to `SCHED_IDLE` needs
    // no privilege either.
    unsafe {
        let current = libc::getpriority(libc::PRIO_PROCESS, 0);
        let target = (current + HELPER_NICENESS).min(MAX_NICENESS);
        let param = libc::sched_param { sched_priority: 0 };
        libc::setpriority(libc::PRIO_PROCESS, 0, target) == 0
            && libc::sched_setscheduler(0, libc::SCHED_IDLE, &param) == 0
    }
}

#[cfg(not(target_os = "linux"))]
pub fn lower_helper_priority() -> bool {
    false
}

/// Puts every `SCHED_IDLE` thread of the process back to the normal policy at the calling
/// thread's nice value; returns how many it lifted. Called just before the process exits:
/// the process is gone only once every thread has run to its end, and while other programs
/// keep the cores busy a `SCHED_IDLE` helper can wait hundreds of milliseconds for that.
/// Lowering a nice value needs `CAP_SYS_NICE` or a `RLIMIT_NICE` that allows it; without
/// either this lifts nothing and changes nothing.
#[cfg(target_os = "linux")]
pub fn lift_helper_priority() -> usize {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return 0;
    };
    // SAFETY: `getpriority` takes integers and touches no memory of ours.
    let nice = unsafe { libc::getpriority(libc::PRIO_PROCESS, 0) };
    let param = libc::sched_param { sched_priority: 0 };
    let mut lifted = 0;
    for tid in tasks
        .flatten()
        .filter_map(|t| t.file_name().to_str()?.parse().ok())
    {
        // SAFETY: as in `lower_helper_priority`: integer arguments and `param`, a live
        // local that is only read. A thread id that has just ended makes the calls fail
        // with ESRCH, which is harmless.
        let ok = unsafe {
            libc::sched_getscheduler(tid) == libc::SCHED_IDLE
                && libc::sched_setscheduler(tid, libc::SCHED_OTHER, &param) == 0
                && libc::setpriority(libc::PRIO_PROCESS, tid as libc::id_t, nice) == 0
        };
        lifted += usize::from(ok);
    }
    lifted
}

#[cfg(not(target_os = "linux"))]
pub fn lift_helper_priority() -> usize {
    0
}

/// `struct sched_attr` of sched_setattr(2) in its first version (48 bytes).
#[cfg(target_os = "linux")]
#[repr(C)]
#[derive(Default)]
struct SchedAttr {
    size: u32,
    sched_policy: u32,
    sched_flags: u64,
    sched_nice: i32,
    sched_priority: u32,
    sched_runtime: u64,
    sched_deadline: u64,
    sched_period: u64,
}

/// Gives the calling thread a time slice of `UCI_SLICE_NS`, keeping its policy and nice
/// value; returns false if the kernel refuses. Since Linux 6.12 a waking thread whose slice
/// is shorter than the running thread's may preempt it at once, so the UCI thread, woken
/// by a command on the core where the main search thread runs, need not wait for the next
/// scheduler tick (4 ms at 250 Hz). Older kernels accept the call and ignore the slice.
/// Threads spawned afterwards inherit it, so call this after the search threads exist.
#[cfg(target_os = "linux")]
pub fn shorten_time_slice() -> bool {
    let Some(mut attr) = current_sched_attr() else {
        return false;
    };
    attr.sched_flags = 0;
    attr.sched_runtime = UCI_SLICE_NS;
    // SAFETY: `sched_setattr(0, attr, 0)` reads `attr.size` bytes of `attr`, a live
    // `#[repr(C)]` value of exactly that size; it acts on the calling thread and keeps no
    // pointer.
    unsafe { libc::syscall(libc::SYS_sched_setattr, 0, &attr as *const SchedAttr, 0) == 0 }
}

/// The calling thread's scheduling attributes, or None if the kernel refuses.
#[cfg(target_os = "linux")]
fn current_sched_attr() -> Option<SchedAttr> {
    let size = std::mem::size_of::<SchedAttr>() as u32;
    let mut attr = SchedAttr::default();
    // SAFETY: `sched_getattr(0, attr, size, 0)` writes at most `size` bytes into `attr`, a
    // live `#[repr(C)]` local of exactly that size laid out as the kernel's version-0
    // `struct sched_attr`; it acts on the calling thread and keeps no pointer.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_sched_getattr,
            0,
            &mut attr as *mut SchedAttr,
            size,
            0,
        )
    };
    attr.size = size;
    (rc == 0).then_some(attr)
}

#[cfg(not(target_os = "linux"))]
pub fn shorten_time_slice() -> bool {
    false
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use std::sync::Mutex;

    /// Held by the tests that lower or lift: a lift in one must not reach the other's thread.
    static PRIORITY_TESTS: Mutex<()> = Mutex::new(());

    /// The calling thread's nice value.
    fn niceness() -> i32 {
        // SAFETY: `getpriority` takes two integers and touches no memory of ours.
        unsafe { libc::getpriority(libc::PRIO_PROCESS, 0) }
    }

    /// The calling thread's scheduling policy.
    fn policy() -> i32 {
        // SAFETY: `sched_getscheduler` takes an integer and touches no memory of ours.
        unsafe { libc::sched_getscheduler(0) }
    }

    /// The calling thread's time slice in nanoseconds, from `sched_getattr`.
    fn slice_ns() -> u64 {
        current_sched_attr()
            .expect("sched_getattr failed")
            .sched_runtime
    }

    #[test]
    fn helper_priority_is_per_thread() {
        let _serial = PRIORITY_TESTS.lock().unwrap_or_else(|e| e.into_inner());
        let before = niceness();
        let (lowered, inside) =
            std::thread::spawn(|| (lower_helper_priority(), (niceness(), policy())))
                .join()
                .unwrap();
        assert!(lowered, "setpriority or sched_setscheduler failed");
        assert_eq!(inside.0, (before + HELPER_NICENESS).min(MAX_NICENESS));
        assert_eq!(inside.1, libc::SCHED_IDLE);
        assert_eq!(
            niceness(),
            before,
            "the calling thread must keep its priority"
        );
        assert_eq!(
            policy(),
            libc::SCHED_OTHER,
            "the calling thread must keep its policy"
        );
    }

    /// On this thread alone, and keeping policy and nice value. Kernels before 6.12 report
    /// no slice for normal threads, so the slice itself is checked only where one is shown.
    #[test]
    fn time_slice_is_shortened_for_the_calling_thread_only() {
        let (shortened, policy_inside, nice_inside, slice) = std::thread::spawn(|| {
            let before = slice_ns();
            let shortened = shorten_time_slice();
            let after = slice_ns();
            (shortened, policy(), niceness(), (before, after))
        })
        .join()
        .unwrap();
        assert!(shortened, "sched_setattr failed");
        assert_eq!(policy_inside, libc::SCHED_OTHER);
        assert_eq!(nice_inside, niceness());
        if slice.0 != 0 {
            assert_eq!(slice.1, UCI_SLICE_NS, "slice before {}", slice.0);
        } else {
            println!("SKIPPED: the kernel shows no time slice (before 6.12), so its length is not checked");
        }
        assert_ne!(
            slice_ns(),
            UCI_SLICE_NS,
            "the test thread must keep its slice"
        );
    }

    /// Whether this process may lower a thread's nice value to `nice`: `CAP_SYS_NICE` in the
    /// effective set (bit 23 of `CapEff` in /proc/self/status) or a `RLIMIT_NICE` of at
    /// least `20 - nice` (setrlimit(2)).
    fn may_lower_nice_to(nice: i32) -> bool {
        const CAP_SYS_NICE: u32 = 23;
        let status = std::fs::read_to_string("/proc/self/status").unwrap();
        let cap_eff = status
            .lines()
            .find_map(|l| l.strip_prefix("CapEff:"))
            .map(|hex| u64::from_str_radix(hex.trim(), 16).unwrap())
            .unwrap();
        let mut limit = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: `getrlimit` writes one `rlimit` into `limit`, a live local of that type.
        assert_eq!(unsafe { libc::getrlimit(libc::RLIMIT_NICE, &mut limit) }, 0);
        cap_eff & (1 << CAP_SYS_NICE) != 0 || limit.rlim_cur >= (20 - nice) as libc::rlim_t
    }

    /// A `SCHED_IDLE` thread goes back to the normal policy at the caller's nice value where
    /// the process may lower a nice value (root here and in CI); elsewhere nothing changes.
    #[test]
    fn lifting_restores_idle_threads_where_permitted() {
        let _serial = PRIORITY_TESTS.lock().unwrap_or_else(|e| e.into_inner());
        let (ready_tx, ready_rx) = std::sync::mpsc::channel();
        let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
        let helper = std::thread::spawn(move || {
            ready_tx.send(lower_helper_priority()).unwrap();
            done_rx.recv().unwrap();
            (policy(), niceness())
        });
        assert!(ready_rx.recv().unwrap(), "could not lower the helper");
        let lifted = lift_helper_priority();
        done_tx.send(()).unwrap();
        let (after_policy, after_nice) = helper.join().unwrap();
        if may_lower_nice_to(niceness()) {
            assert!(lifted >= 1, "nothing lifted");
            assert_eq!(after_policy, libc::SCHED_OTHER);
            assert_eq!(after_nice, niceness());
        } else {
            // A `RLIMIT_NICE` of 1 to 19 would allow the policy change but not the nice value.
            assert_eq!(lifted, 0);
            assert_eq!(after_nice, (niceness() + HELPER_NICENESS).min(MAX_NICENESS));
        }
    }
}
