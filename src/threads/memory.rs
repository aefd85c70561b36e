//! Giving the memory of retired helpers back to the system.
//!
//! A helper's tables (1.2 MB of histories) are allocated on the search thread and freed by
//! the helper when it ends. glibc serves such blocks from its heaps once a freed mapped
//! block has raised its adaptive mmap threshold, and keeps them there when freed: a pool
//! of a thousand helpers left about 1 GB resident after it was retired, and each 1024 <-> 1
//! round added more (1.39 GB after 5 rounds, 1.76 GB after 15). `malloc_trim` after the
//! helpers ended gave it back, but holds a heap's lock while it works, which stalled the
//! search thread's own allocations for up to seconds. A fixed threshold instead makes
//! every large block a mapping of its own, returned by `free` at once.

/// Blocks of this size or more get a mapping of their own.
const LARGE_BLOCK_BYTES: i32 = 64 * 1024;

/// Fixes glibc's mmap threshold at `LARGE_BLOCK_BYTES`; true if glibc accepted it.
/// Elsewhere (other allocators) it does nothing and returns false.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub fn map_large_blocks() -> bool {
    // SAFETY: `mallopt` takes two integers and only changes glibc's allocator parameters,
    // under the allocator's own locks; blocks already allocated are unaffected, so no Rust
    // value can be. Exercised by `large_blocks_are_returned_when_freed`.
    unsafe { libc::mallopt(libc::M_MMAP_THRESHOLD, LARGE_BLOCK_BYTES) == 1 }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub fn map_large_blocks() -> bool {
    false
}

#[cfg(all(test, target_os = "linux", target_env = "gnu"))]
mod tests {
    use super::*;

    fn resident_kb() -> u64 {
        let status = std::fs::read_to_string("/proc/self/status").unwrap();
        let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
        line.split_whitespace().nth(1).unwrap().parse().unwrap()
    }

    /// Set in the child process that measures alone.
    const ALONE_VAR: &str = "BASALT_MEMORY_TEST_ALONE";

    /// Resident memory is the whole process's, and the library's other tests allocate
    /// beside this one (tens of MB when they load nets), so the measurement runs in a child
    /// process of this test binary that runs this test alone.
    #[test]
    fn large_blocks_are_returned_when_freed() {
        if std::env::var_os(ALONE_VAR).is_some() {
            measure_large_blocks_returned();
            return;
        }
        let module = module_path!().split_once("::").map_or("", |(_, rest)| rest);
        let name = format!("{module}::large_blocks_are_returned_when_freed");
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args([name.as_str(), "--exact", "--test-threads=1", "--nocapture"])
            .env(ALONE_VAR, "1")
            .output()
            .expect("run this test alone in a child process");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{text}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            text.contains("1 passed"),
            "the child did not run the test: {text}"
        );
    }

    fn measure_large_blocks_returned() {
        assert!(map_large_blocks());
        // 128 MB in 1.2 MB blocks, written so they are resident, then freed: nearly all
        // of it must leave the process at once.
        let blocks: Vec<Vec<u8>> = (0..107).map(|i| vec![i as u8 | 1; 1_200_000]).collect();
        let with_blocks = resident_kb();
        drop(std::hint::black_box(blocks));
        let after = resident_kb();
        assert!(
            after + 120 * 1024 < with_blocks,
            "resident {with_blocks} kB with the blocks, {after} kB after freeing them"
        );
    }
}
