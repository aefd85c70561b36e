//! Pawn structure: the terms that depend on pawns alone, and a per-thread cache of them
//! keyed by the pawn placement (pawn structures repeat far more often than positions).

use std::cell::RefCell;

use shakmaty::attacks;
use shakmaty::{Bitboard, Color, Square};

use super::bitboards::{
    adjacent_files, file_ahead, forward, front_span, pawn_attacks, ranks_ahead, relative_rank,
};
use super::layout::*;
use super::sink::{PawnInfo, Sink};
use super::tapered::Score;

/// Reports the pawn-structure terms of both colours (`pawns` indexed by `Color as usize`).
pub fn structure<S: Sink>(pawns: [Bitboard; 2], sink: &mut S) -> PawnInfo {
    let mut info = PawnInfo::default();
    for us in Color::ALL {
        let ours = pawns[us as usize];
        let theirs = pawns[!us as usize];
        let their_attacks = pawn_attacks(theirs, !us);
        for sq in ours {
            if is_passed(sq, us, ours, theirs, sink) {
                info.passed[us as usize] |= Bitboard::from(sq);
            }
            pawn_shape(sq, us, ours, their_attacks, sink);
        }
    }
    info
}

/// Passed and candidate-passer terms; true for a passed pawn.
fn is_passed<S: Sink>(
    sq: Square,
    us: Color,
    ours: Bitboard,
    theirs: Bitboard,
    sink: &mut S,
) -> bool {
    let rank = relative_rank(sq, us);
    // The rear pawn of a doubled pair is never the passer: the front one is.
    if (file_ahead(sq, us) & (ours | theirs)).any() {
        return false;
    }
    let sentries = front_span(sq, us) & theirs;
    if sentries.is_empty() {
        sink.add(us, PASSED_PAWN + rank, 1);
        return true;
    }
    // A candidate: its file is open ahead and its neighbours can trade off the sentries.
    let helpers = adjacent_files(sq.file()) & !ranks_ahead(sq.rank(), us) & ours;
    if helpers.count() >= sentries.count() {
        sink.add(us, CANDIDATE_PASSER + rank, 1);
    }
    false
}

/// Doubled, isolated, backward, phalanx and supported pawns.
fn pawn_shape<S: Sink>(
    sq: Square,
    us: Color,
    ours: Bitboard,
    their_attacks: Bitboard,
    sink: &mut S,
) {
    let rank = relative_rank(sq, us);
    let neighbours = adjacent_files(sq.file()) & ours;
    if (file_ahead(sq, us) & ours).any() {
        sink.add(us, DOUBLED_PAWN, 1);
    }
    if neighbours.is_empty() {
        sink.add(us, ISOLATED_PAWN, 1);
    } else {
        // Backward: every neighbour is ahead of it, and its stop square is attacked by an
        // enemy pawn, so it can neither be defended by a pawn nor advance safely.
        let level_or_behind = !ranks_ahead(sq.rank(), us);
        let stop_attacked = (forward(Bitboard::from(sq), us) & their_attacks).any();
        if (neighbours & level_or_behind).is_empty() && stop_attacked {
            sink.add(us, BACKWARD_PAWN, 1);
        }
    }
    if (neighbours & Bitboard::from(sq.rank())).any() {
        sink.add(us, PHALANX_PAWN + rank, 1);
    }
    if (attacks::pawn_attacks(!us, sq) & ours).any() {
        sink.add(us, SUPPORTED_PAWN + rank, 1);
    }
}

/// A cached pawn-structure result: the structure score (White minus Black) and the passers.
#[derive(Clone, Copy, Default)]
struct Entry {
    pawns: [Bitboard; 2],
    valid: bool,
    score: Score,
    info: PawnInfo,
}

const CACHE_ENTRIES: usize = 1 << 13;

thread_local! {
    static CACHE: RefCell<Vec<Entry>> = RefCell::new(vec![Entry::default(); CACHE_ENTRIES]);
}

fn slot(pawns: [Bitboard; 2]) -> usize {
    let mixed = (pawns[0].0 ^ pawns[1].0.rotate_left(29)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    (mixed >> 51) as usize % CACHE_ENTRIES
}

/// The structure score and info for `pawns`, computed with `compute` on a cache miss. The
/// entry stores the full pawn bitboards, so a hit is never a different structure.
pub fn cached(
    pawns: [Bitboard; 2],
    compute: impl FnOnce() -> (Score, PawnInfo),
) -> (Score, PawnInfo) {
    let index = slot(pawns);
    if let Some(hit) = CACHE.with_borrow(|cache| {
        let e = &cache[index];
        (e.valid && e.pawns == pawns).then_some((e.score, e.info))
    }) {
        return hit;
    }
    let (score, info) = compute();
    CACHE.with_borrow_mut(|cache| {
        cache[index] = Entry {
            pawns,
            valid: true,
            score,
            info,
        };
    });
    (score, info)
}
