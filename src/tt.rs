//! The lockless transposition table.
//!
//! Layout: the table is a power-of-two number of 64-byte buckets, each holding four
//! 16-byte entries. An entry is two `AtomicU64` words:
//!
//! ```text
//!   word 0: key ^ data          (the "check" word)
//!   word 1: data = move:16 | score:16 | depth:8 | bound:2 | pv:1 | generation:5 | 0:16
//! ```
//!
//! `pv` (the TT-PV flag) says the position was on a principal variation when stored, or
//! had been before: the search reduces such nodes less. Its bit came from the generation,
//! whose five bits still tell 32 searches apart: replacement counts each search of age as
//! 8 plies, so an entry a few searches old loses to nearly any new one anyway.
//!
//! A reader accepts an entry only if `word0 ^ word1 == key`. Two threads writing the same
//! entry at once may leave word 0 from one write and word 1 from the other; the XOR check
//! then fails and the torn entry reads as a miss, never as a wrong score or move. Relaxed
//! atomics suffice: each word is read and written whole, and a stale or mismatched pair is
//! exactly what the XOR check rejects.

use std::sync::atomic::{AtomicU64, Ordering};

use shakmaty::{Move, Role, Square};

pub const MIN_HASH_MB: usize = 1;
pub const MAX_HASH_MB: usize = 65536;
pub const DEFAULT_HASH_MB: usize = 16;

const ENTRIES_PER_BUCKET: usize = 4;
/// A bucket is one cache line: a probe or store reads one line, the one `prefetch` loads.
const CACHE_LINE_BYTES: usize = 64;
const SLOT_BYTES: usize = std::mem::size_of::<Slot>();
const _: () = assert!(ENTRIES_PER_BUCKET * SLOT_BYTES == CACHE_LINE_BYTES);
const GENERATION_MASK: u8 = 0x1f;
const DEPTH_SHIFT: u32 = 32;
const BOUND_SHIFT: u32 = 40;
const PV_BIT: u64 = 1 << 42;
const GENERATION_SHIFT: u32 = 43;
/// A new bound for a key does not replace an entry more than this many plies deeper...
const KEEP_DEEPER_BY: u8 = 3;
/// ... nor does a new exact result replace one of the same search this much deeper.
const KEEP_FAR_DEEPER_BY: u8 = 8;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bound {
    Exact = 1,
    Lower = 2,
    Upper = 3,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TtEntry {
    pub mv: PackedMove,
    pub score: i16,
    pub depth: u8,
    pub bound: Bound,
    /// The TT-PV flag: the node was (or had been) on a principal variation.
    pub is_pv: bool,
}

/// A move in 16 bits: from (6) | to (6) | promotion role (3). Castling is stored as king
/// square to rook square, as shakmaty's `Move::Castle` has it. Zero means "no move".
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct PackedMove(pub u16);

impl PackedMove {
    pub const NONE: PackedMove = PackedMove(0);

    pub fn from_move(m: Move) -> PackedMove {
        let (from, to, promo) = match m {
            Move::Normal {
                from,
                to,
                promotion,
                ..
            } => (from, to, promotion.map_or(0, |r| r as u16)),
            Move::EnPassant { from, to } => (from, to, 0),
            Move::Castle { king, rook } => (king, rook, 0),
            Move::Put { to, .. } => (to, to, 0),
        };
        PackedMove(1 << 15 | (from as u16) | (to as u16) << 6 | promo << 12)
    }

    pub fn is_none(self) -> bool {
        self.0 == 0
    }

    pub fn from_square(self) -> Square {
        Square::new(u32::from(self.0 & 63))
    }

    pub fn to_square(self) -> Square {
        Square::new(u32::from(self.0 >> 6 & 63))
    }

    pub fn promotion(self) -> Option<Role> {
        Role::try_from((self.0 >> 12 & 7) as u8).ok()
    }
}

struct Slot {
    check: AtomicU64,
    data: AtomicU64,
}

pub struct TranspositionTable {
    /// The slots (`slots()`) from `first` on, which starts a cache line: the allocator
    /// aligns a block to 16 bytes, and a bucket that straddled two lines would make every
    /// probe and store wait for both. A few spare slots before and after are never used.
    storage: Vec<Slot>,
    first: usize,
    bucket_mask: usize,
    generation: std::sync::atomic::AtomicU8,
}

fn pack(entry: &TtEntry, generation: u8) -> u64 {
    u64::from(entry.mv.0)
        | u64::from(entry.score as u16) << 16
        | u64::from(entry.depth) << DEPTH_SHIFT
        | (entry.bound as u64) << BOUND_SHIFT
        | if entry.is_pv { PV_BIT } else { 0 }
        | u64::from(generation & GENERATION_MASK) << GENERATION_SHIFT
}

fn unpack(data: u64) -> Option<(TtEntry, u8)> {
    let bound = match (data >> BOUND_SHIFT) & 3 {
        1 => Bound::Exact,
        2 => Bound::Lower,
        3 => Bound::Upper,
        _ => return None,
    };
    Some((
        TtEntry {
            mv: PackedMove(data as u16),
            score: (data >> 16) as u16 as i16,
            depth: (data >> DEPTH_SHIFT) as u8,
            bound,
            is_pv: data & PV_BIT != 0,
        },
        (data >> GENERATION_SHIFT) as u8 & GENERATION_MASK,
    ))
}

/// Memory the system can still give us (Linux: `MemAvailable`), if known.
fn available_memory_bytes() -> Option<usize> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = meminfo.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kb: usize = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// Transparent huge pages are 2 MiB on x86-64 and the common arm64 configuration.
const HUGE_PAGE_BYTES: usize = 2 * 1024 * 1024;

/// Asks Linux to back the 2 MiB-aligned interior of `[start, start + bytes)` with
/// transparent huge pages. A probe touches a random bucket, so with 4 KiB pages nearly every
/// probe also misses the TLB; and a table of huge pages is torn down in a fraction of the
/// time at `quit` (Hash=256 during a search: 34-49 ms with small pages, 4 ms with huge ones). Returns whether the kernel accepted the
/// advice (false when there is no aligned interior, or THP is unavailable).
#[cfg(target_os = "linux")]
fn advise_huge_pages(start: usize, bytes: usize) -> bool {
    let first = start.next_multiple_of(HUGE_PAGE_BYTES);
    let end = (start + bytes) / HUGE_PAGE_BYTES * HUGE_PAGE_BYTES;
    if end <= first {
        return false;
    }
    // SAFETY: `[first, end)` lies inside the allocation the caller just reserved and owns
    // (it starts at or after `start` and ends at or before `start + bytes`), and both ends
    // are page aligned as madvise(2) requires. MADV_HUGEPAGE only changes how the kernel
    // backs those pages; it never changes their contents or whether they are mapped, so no
    // Rust reference or value can be affected. Exercised by `tables_ask_for_huge_pages`.
    unsafe { libc::madvise(first as *mut libc::c_void, end - first, libc::MADV_HUGEPAGE) == 0 }
}

#[cfg(not(target_os = "linux"))]
fn advise_huge_pages(_start: usize, _bytes: usize) -> bool {
    false
}

/// Below this many bytes a thread, a table is cleared by fewer threads: starting one costs
/// more than it saves.
const MIN_BYTES_PER_THREAD: usize = 16 * 1024 * 1024;

/// The smallest page the kernel maps: one write in each makes the whole table resident.
const PAGE_BYTES: usize = 4096;

/// `len` slots of zero bytes, or `None` if the memory cannot be had. The allocator hands
/// out a large block as fresh pages that the kernel maps (and zeroes) only when first
/// written, so this takes no time; [`TranspositionTable::touch_pages`] then faults them in.
fn zeroed_slots(len: usize) -> Option<Vec<Slot>> {
    let layout = std::alloc::Layout::array::<Slot>(len).ok()?;
    if layout.size() == 0 {
        return None;
    }
    // SAFETY: `layout` has a non-zero size, as `alloc_zeroed` requires.
    let ptr = unsafe { std::alloc::alloc_zeroed(layout) }.cast::<Slot>();
    if ptr.is_null() {
        return None;
    }
    // SAFETY: `ptr` comes from the global allocator with the layout of `len` slots, which
    // is what a `Vec<Slot>` of capacity `len` frees it with, and it is not used elsewhere.
    // All `len` slots are initialized: their bytes are zero, and a `Slot` of zero bytes is
    // a valid value (two `AtomicU64`s, which have the representation of `u64`, whose every
    // bit pattern is valid). Exercised by every test that makes a table, among them
    // `a_new_table_is_empty_and_resident`.
    Some(unsafe { Vec::from_raw_parts(ptr, len, len) })
}

/// How many slots after `address` (a slot's) the next cache line starts: the first slot of
/// the table's first bucket. 0 if slots there cannot start a line (an allocator that
/// aligns to less than a slot's 16 bytes): buckets then straddle lines, which is slower
/// but still correct.
fn slots_to_cache_line(address: usize) -> usize {
    let gap = address.next_multiple_of(CACHE_LINE_BYTES) - address;
    if gap.is_multiple_of(SLOT_BYTES) {
        gap / SLOT_BYTES
    } else {
        0
    }
}

/// The indices, among `len` slots from address `start`, of one slot in each page they
/// overlap: the first slot (its page may start before it), then the slot at or across
/// each page boundary (a slot across one has a word on each side).
fn page_firsts(start: usize, len: usize) -> impl Iterator<Item = usize> {
    let to_boundary = (start.next_multiple_of(PAGE_BYTES) - start) / SLOT_BYTES;
    let boundaries = (to_boundary..len)
        .step_by(PAGE_BYTES / SLOT_BYTES)
        .filter(|&i| i > 0);
    (0..len.min(1)).chain(boundaries)
}

impl TranspositionTable {
    /// Allocates a table of `mb` megabytes, rounded down to a power-of-two bucket count,
    /// and writes every page of it with up to `threads` threads, so that neither `go` nor
    /// the search pays for mapping the memory. Returns `None` instead of aborting if the
    /// memory cannot be had.
    pub fn try_new(mb: usize, threads: usize) -> Option<TranspositionTable> {
        let bytes = mb.clamp(MIN_HASH_MB, MAX_HASH_MB) * 1024 * 1024;
        let buckets = (bytes / (ENTRIES_PER_BUCKET * SLOT_BYTES)).max(1);
        let buckets = if buckets.is_power_of_two() {
            buckets
        } else {
            buckets.next_power_of_two() / 2
        };
        let len = buckets * ENTRIES_PER_BUCKET;
        // With overcommit the reservation below can succeed for more memory than exists,
        // and filling the table would then get the process killed: refuse up front.
        if available_memory_bytes().is_some_and(|free| bytes > free) {
            return None;
        }
        let storage = zeroed_slots(len + ENTRIES_PER_BUCKET)?;
        let first = slots_to_cache_line(storage.as_ptr() as usize);
        // Before the first touch, so the touch below already faults in huge pages.
        advise_huge_pages(
            storage.as_ptr() as usize,
            std::mem::size_of_val(storage.as_slice()),
        );
        let tt = TranspositionTable {
            storage,
            first,
            bucket_mask: buckets - 1,
            generation: std::sync::atomic::AtomicU8::new(0),
        };
        tt.touch_pages(threads);
        Some(tt)
    }

    /// Whether a table of `mb` MB can be had once one of `freed_mb` MB has been freed: a
    /// quick check (no allocation) so a size the machine cannot hold is refused at once.
    pub fn fits_in_memory(mb: usize, freed_mb: usize) -> bool {
        let bytes = mb.clamp(MIN_HASH_MB, MAX_HASH_MB) * 1024 * 1024;
        available_memory_bytes().is_none_or(|free| bytes <= free + freed_mb * 1024 * 1024)
    }

    pub fn new(mb: usize) -> TranspositionTable {
        TranspositionTable::try_new(mb, 1).expect("transposition table allocation failed")
    }

    pub fn size_mb(&self) -> usize {
        std::mem::size_of_val(self.slots()) / (1024 * 1024)
    }

    /// The slots in use, `ENTRIES_PER_BUCKET` a bucket, from a cache-line boundary on.
    fn slots(&self) -> &[Slot] {
        let len = (self.bucket_mask + 1) * ENTRIES_PER_BUCKET;
        &self.storage[self.first..self.first + len]
    }

    pub fn clear(&self) {
        self.clear_with_threads(1);
    }

    /// Empties the table, split among up to `threads` threads (at most one a core).
    pub fn clear_with_threads(&self, threads: usize) {
        self.in_parts(threads, |part| {
            for slot in part {
                slot.check.store(0, Ordering::Relaxed);
                slot.data.store(0, Ordering::Relaxed);
            }
        });
        self.generation.store(0, Ordering::Relaxed);
    }

    /// Writes a zero into every page of a table that is all zero already, so the kernel
    /// maps each page now, not at the first search's probe into it (docs/reliability.md:
    /// seconds for a table of some GB on a virtual machine).
    fn touch_pages(&self, threads: usize) {
        self.in_parts(threads, |part| {
            for i in page_firsts(part.as_ptr() as usize, part.len()) {
                part[i].check.store(0, Ordering::Relaxed);
                part[i].data.store(0, Ordering::Relaxed);
            }
        });
    }

    /// Runs `work` on consecutive parts of the table on up to `threads` threads, one of
    /// them the caller's. More threads than cores would only take turns, and a thread that
    /// cannot be started leaves its part to the caller.
    fn in_parts(&self, threads: usize, work: impl Fn(&[Slot]) + Sync) {
        let slots = self.slots();
        let bytes = std::mem::size_of_val(slots);
        let threads = threads.min(bytes / MIN_BYTES_PER_THREAD);
        if threads <= 1 {
            work(slots);
            return;
        }
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let threads = threads.min(cores);
        let part_len = slots.len().div_ceil(threads);
        let mut parts = slots.chunks(part_len);
        let first = parts.next().unwrap_or_default();
        let work = &work;
        std::thread::scope(|scope| {
            for part in parts {
                let spawned = std::thread::Builder::new()
                    .name("tt-clear".into())
                    .spawn_scoped(scope, move || work(part));
                if spawned.is_err() {
                    work(part);
                }
            }
            work(first);
        });
    }

    /// Called once per search so older entries become preferred victims.
    pub fn new_search(&self) {
        let g = self.generation.load(Ordering::Relaxed);
        self.generation
            .store((g + 1) & GENERATION_MASK, Ordering::Relaxed);
    }

    fn generation(&self) -> u8 {
        self.generation.load(Ordering::Relaxed)
    }

    #[inline]
    fn bucket(&self, key: u64) -> &[Slot] {
        // The high bits pick the bucket so the low bits stay independent of the index.
        let index = ((key >> 32) as usize ^ key as usize) & self.bucket_mask;
        let start = self.first + index * ENTRIES_PER_BUCKET;
        &self.storage[start..start + ENTRIES_PER_BUCKET]
    }

    /// Asks the CPU to start loading `key`'s bucket into the cache. Called right after a
    /// move is made, so the load overlaps the child's draw checks and move bookkeeping
    /// instead of stalling its probe: a bucket is almost never cached already.
    #[inline]
    pub fn prefetch(&self, key: u64) {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            let bucket = self.bucket(key).as_ptr().cast::<i8>();
            // SAFETY: a prefetch is only a hint to the cache: it never faults, reads nothing
            // into the program and writes nothing, whatever the address (and this one points
            // into the table). SSE, its target feature, is part of the x86_64 baseline.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(bucket) };
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = key;
    }

    #[inline]
    pub fn probe(&self, key: u64) -> Option<TtEntry> {
        for slot in self.bucket(key) {
            let data = slot.data.load(Ordering::Relaxed);
            let check = slot.check.load(Ordering::Relaxed);
            if check ^ data == key {
                return unpack(data).map(|(e, _)| e);
            }
        }
        None
    }

    /// Stores an entry. Replacement: the same key is always overwritten (keeping its move if
    /// the new entry has none); otherwise the slot with the lowest depth, counting stale
    /// generations as much shallower, is the victim.
    pub fn store(&self, key: u64, mut entry: TtEntry) {
        let generation = self.generation();
        let bucket = self.bucket(key);
        let mut victim = &bucket[0];
        let mut victim_worth = i32::MAX;
        for slot in bucket {
            let data = slot.data.load(Ordering::Relaxed);
            let check = slot.check.load(Ordering::Relaxed);
            if check ^ data == key {
                if let Some((old, gen)) = unpack(data) {
                    if entry.mv.is_none() {
                        entry.mv = old.mv;
                    }
                    // Keep a much deeper result over a shallow bound, and over a shallow
                    // exact result too if it is from this search: a helper far behind the
                    // main thread (many threads on few cores) searches the nodes near the
                    // root again at low depth, and its exact entries would erase the moves
                    // the main thread's next iteration needs.
                    let keep_by = if entry.bound != Bound::Exact {
                        KEEP_DEEPER_BY
                    } else if gen == generation {
                        KEEP_FAR_DEEPER_BY
                    } else {
                        u8::MAX
                    };
                    if old.depth > entry.depth.saturating_add(keep_by) {
                        return;
                    }
                }
                victim = slot;
                break;
            }
            let worth = match unpack(data) {
                None => i32::MIN,
                Some((old, gen)) => {
                    let age = i32::from(generation.wrapping_sub(gen) & GENERATION_MASK);
                    i32::from(old.depth) - 8 * age
                }
            };
            if worth < victim_worth {
                victim_worth = worth;
                victim = slot;
            }
        }
        let data = pack(&entry, generation);
        victim.data.store(data, Ordering::Relaxed);
        victim.check.store(key ^ data, Ordering::Relaxed);
    }

    /// Permille of a sample of entries written during the current search.
    pub fn hashfull(&self) -> usize {
        let generation = self.generation();
        let slots = self.slots();
        let sample = slots.len().min(1000);
        let used = slots[..sample]
            .iter()
            .filter(|s| {
                unpack(s.data.load(Ordering::Relaxed)).is_some_and(|(_, g)| g == generation)
            })
            .count();
        used * 1000 / sample.max(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The prefetch of `prefetch` is a hint: after prefetching every bucket, including
    /// those of keys at the table's edges, the table holds and returns exactly what it did.
    #[test]
    fn prefetch_of_any_key_changes_nothing() {
        let tt = TranspositionTable::new(1);
        let keys = [0, 1, u64::MAX, 0x9e37_79b9_7f4a_7c15, 0x0123_4567_89ab_cdef];
        for &key in &keys {
            tt.store(key, entry(5, 42));
        }
        for bucket in 0..=tt.bucket_mask as u64 {
            tt.prefetch(bucket);
            tt.prefetch(bucket << 32);
        }
        for &key in &keys {
            tt.prefetch(key);
            assert_eq!(tt.probe(key), Some(entry(5, 42)));
        }
    }

    fn entry(depth: u8, score: i16) -> TtEntry {
        TtEntry {
            mv: PackedMove(0x8123),
            score,
            depth,
            bound: Bound::Lower,
            is_pv: false,
        }
    }

    #[test]
    fn store_then_probe_round_trips() {
        let tt = TranspositionTable::new(1);
        tt.store(0xdead_beef_1234_5678, entry(7, -31000));
        assert_eq!(tt.probe(0xdead_beef_1234_5678), Some(entry(7, -31000)));
        assert_eq!(tt.probe(0xdead_beef_1234_5679), None);
    }

    #[test]
    fn a_shallow_result_does_not_erase_a_deep_one_of_the_same_search() {
        let tt = TranspositionTable::new(1);
        let key = 0x0123_4567_89ab_cdef;
        let exact = |depth, score| TtEntry {
            bound: Bound::Exact,
            mv: PackedMove(0x0456),
            ..entry(depth, score)
        };
        tt.store(key, exact(20, 31_000));
        // A bound 4 plies shallower does not replace it, nor does an exact result of this
        // search 9 plies shallower (a helper far behind the main thread).
        tt.store(key, entry(16, 5));
        tt.store(key, exact(11, 40));
        assert_eq!(tt.probe(key), Some(exact(20, 31_000)));
        // A moderately shallower exact result does, as does one of a later search.
        tt.store(key, exact(12, 50));
        assert_eq!(tt.probe(key), Some(exact(12, 50)));
        tt.store(key, exact(30, 60));
        tt.new_search();
        tt.store(key, exact(2, 70));
        assert_eq!(tt.probe(key), Some(exact(2, 70)));
    }

    /// The TT-PV bit has its own place in the data word: every field, the flag and the
    /// generation come back as stored, at their extremes too.
    #[test]
    fn pv_flag_round_trips_with_every_other_field() {
        let moves = [PackedMove::NONE, PackedMove(0x8123), PackedMove(0xffff)];
        for mv in moves {
            for score in [i16::MIN, -1, 0, 31_000, i16::MAX] {
                for depth in [0, 1, 127, 255] {
                    for bound in [Bound::Exact, Bound::Lower, Bound::Upper] {
                        for is_pv in [false, true] {
                            for generation in 0..=GENERATION_MASK {
                                let e = TtEntry {
                                    mv,
                                    score,
                                    depth,
                                    bound,
                                    is_pv,
                                };
                                assert_eq!(unpack(pack(&e, generation)), Some((e, generation)));
                            }
                        }
                    }
                }
            }
        }
        // Through the table, with the XOR check: the flag is set and cleared by a store.
        let tt = TranspositionTable::new(1);
        let key = 0x0f0f_1234_5678_9abc;
        let pv = TtEntry {
            is_pv: true,
            ..entry(9, -250)
        };
        tt.store(key, pv);
        assert_eq!(tt.probe(key), Some(pv));
        tt.store(key, entry(9, 30));
        assert_eq!(tt.probe(key), Some(entry(9, 30)));
        // A data word that differs from the stored one in the flag alone is a torn write.
        let slot = tt
            .bucket(key)
            .iter()
            .find(|s| s.check.load(Ordering::Relaxed) ^ s.data.load(Ordering::Relaxed) == key)
            .unwrap();
        slot.data.fetch_xor(PV_BIT, Ordering::Relaxed);
        assert_eq!(tt.probe(key), None);
    }

    #[test]
    fn torn_write_reads_as_miss() {
        let tt = TranspositionTable::new(1);
        let key = 42u64 << 40 | 7;
        tt.store(key, entry(5, 100));
        // Simulate a torn write: the data word of another entry with the old check word.
        let slot = tt
            .bucket(key)
            .iter()
            .find(|s| s.data.load(Ordering::Relaxed) != 0)
            .unwrap();
        slot.data.store(pack(&entry(9, -500), 0), Ordering::Relaxed);
        assert_eq!(tt.probe(key), None);
    }

    /// Every page that a run of slots overlaps gets a slot written, wherever the run starts
    /// and ends relative to the pages.
    #[test]
    fn page_firsts_reach_every_page() {
        const SLOT: usize = std::mem::size_of::<Slot>();
        for start in [0, 8, 16, 4080, 4088, 4096, 5000 & !7, 1 << 21] {
            for len in [0, 1, 2, 255, 256, 257, 511, 512, 1000, 4096] {
                let touched: Vec<usize> = page_firsts(start, len).collect();
                assert!(touched.windows(2).all(|w| w[0] < w[1]), "{start} {len}");
                assert!(touched.iter().all(|&i| i < len));
                let pages_written: std::collections::HashSet<usize> = touched
                    .iter()
                    .flat_map(|&i| {
                        [
                            (start + i * SLOT) / PAGE_BYTES,
                            (start + i * SLOT + 8) / PAGE_BYTES,
                        ]
                    })
                    .collect();
                if len > 0 {
                    let first_page = start / PAGE_BYTES;
                    let last_page = (start + len * SLOT - 1) / PAGE_BYTES;
                    for page in first_page..=last_page {
                        assert!(pages_written.contains(&page), "{start} {len}: page {page}");
                    }
                }
            }
        }
    }

    /// Resident memory of the mappings that overlap `[start, end)`, from /proc/self/smaps
    /// (the huge-page advice splits a table into up to three).
    fn resident_kb_over(start: usize, end: usize) -> Option<usize> {
        let smaps = std::fs::read_to_string("/proc/self/smaps").ok()?;
        let (mut overlaps, mut total) = (false, 0);
        for line in smaps.lines() {
            let range = line.split_whitespace().next().unwrap_or("");
            let bounds = range.split_once('-').and_then(|(lo, hi)| {
                Some((
                    usize::from_str_radix(lo, 16).ok()?,
                    usize::from_str_radix(hi, 16).ok()?,
                ))
            });
            if let Some((lo, hi)) = bounds {
                overlaps = lo < end && start < hi;
            } else if let Some(rss) = line.strip_prefix("Rss:").filter(|_| overlaps) {
                total += rss
                    .trim()
                    .trim_end_matches("kB")
                    .trim()
                    .parse::<usize>()
                    .ok()?;
            }
        }
        Some(total)
    }

    /// A new table reads as empty, and all of its memory is resident before any probe
    /// (made so by one and by several threads); clearing with several threads empties it.
    #[test]
    fn a_new_table_is_empty_and_resident() {
        for threads in [1, 2, 8] {
            let tt = TranspositionTable::try_new(64, threads).unwrap();
            let start = tt.slots().as_ptr() as usize;
            let end = start + std::mem::size_of_val(tt.slots());
            if let Some(kb) = resident_kb_over(start, end) {
                assert!(kb >= 64 * 1024, "{threads} threads: {kb} kB resident");
            }
            assert!(tt.slots().iter().all(|s| {
                s.check.load(Ordering::Relaxed) == 0 && s.data.load(Ordering::Relaxed) == 0
            }));
            assert_eq!(tt.hashfull(), 0);
            let keys: Vec<u64> = (1..=10_000u64)
                .map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15))
                .collect();
            for &key in &keys {
                assert_eq!(tt.probe(key), None);
                tt.store(key, entry(3, 7));
            }
            assert!(keys.iter().filter(|&&k| tt.probe(k).is_some()).count() > 9_000);
            tt.clear_with_threads(threads);
            assert!(keys.iter().all(|&k| tt.probe(k).is_none()));
        }
    }

    /// Every bucket is one cache line, at every size (the allocator hands out blocks
    /// aligned to 16 bytes, not 64); a block aligned to 8 would keep the lines crossed
    /// rather than shift a slot in two.
    #[test]
    fn buckets_start_cache_lines() {
        for mb in [1, 2, 16, 64] {
            let tt = TranspositionTable::new(mb);
            assert_eq!(
                tt.slots().as_ptr() as usize % CACHE_LINE_BYTES,
                0,
                "{mb} MB"
            );
            for key in (0..1000u64).map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15)) {
                let bucket = tt.bucket(key);
                assert_eq!(bucket.as_ptr() as usize % CACHE_LINE_BYTES, 0, "{mb} MB");
                assert_eq!(bucket.len() * SLOT_BYTES, CACHE_LINE_BYTES);
            }
            assert_eq!(tt.size_mb(), mb);
        }
        for (address, slots) in [(0x1000, 0), (0x1010, 3), (0x1020, 2), (0x1030, 1)] {
            assert_eq!(slots_to_cache_line(address), slots);
        }
        assert_eq!(slots_to_cache_line(0x1008), 0);
    }

    #[test]
    fn sizes_are_powers_of_two() {
        for mb in [1, 3, 16, 17] {
            let tt = TranspositionTable::new(mb);
            assert!((tt.bucket_mask + 1).is_power_of_two());
            assert!(tt.size_mb() <= mb);
        }
    }

    #[test]
    fn hashfull_counts_current_generation() {
        let tt = TranspositionTable::new(1);
        assert_eq!(tt.hashfull(), 0);
        for i in 0..100_000u64 {
            tt.store(i.wrapping_mul(0x9e37_79b9_7f4a_7c15), entry(1, 0));
        }
        assert!(tt.hashfull() > 0);
        tt.new_search();
        assert_eq!(tt.hashfull(), 0);
    }

    #[test]
    fn tables_ask_for_huge_pages() {
        // Too small for an aligned 2 MiB interior: no advice, nothing touched.
        let small: Vec<u8> = Vec::with_capacity(HUGE_PAGE_BYTES / 2);
        assert!(!advise_huge_pages(
            small.as_ptr() as usize,
            small.capacity()
        ));
        let thp = std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled");
        if cfg!(target_os = "linux") && thp.is_ok_and(|t| !t.contains("[never]")) {
            let big: Vec<u8> = Vec::with_capacity(4 * HUGE_PAGE_BYTES);
            assert!(advise_huge_pages(big.as_ptr() as usize, big.capacity()));
        } else {
            println!("SKIPPED: no transparent huge pages here, so the advice is not checked");
        }
        // A table allocated with the advice works as any other.
        let tt = TranspositionTable::new(16);
        let key = 0x1234_5678_9abc_def0;
        tt.store(key, entry(7, 42));
        assert_eq!(tt.probe(key).map(|e| e.score), Some(42));
    }
}
