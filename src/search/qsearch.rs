//! Quiescence search: resolve captures (and queen promotions) so the evaluation is only
//! trusted in quiet positions. In check, every evasion is searched, since standing pat is
//! not an option when the king is attacked.

use super::correction::corrected;
use super::params::*;
use super::{score_from_tt, tt_bound_cuts, Searcher};
use crate::position::Position;
use crate::score::piece_value;
use crate::score::*;
use crate::see::see_at_least;

pub fn qsearch(s: &mut Searcher, pos: &mut Position, ply: usize, mut alpha: i32, beta: i32) -> i32 {
    s.state.nodes += 1;
    s.state.stats.qnodes += 1;
    if s.should_abort() {
        return 0;
    }
    s.state.seldepth = s.state.seldepth.max(ply);
    s.state.stack[ply].pv_len = ply;
    if pos.is_insufficient_material() {
        return DRAW;
    }
    let in_check = pos.in_check();
    if ply >= MAX_PLY - 1 {
        return if in_check { DRAW } else { s.evaluate(pos, ply) };
    }

    // The raw static evaluation first, though a cutoff by the table may not need it: the
    // parent prefetched this node's bucket, and the evaluation's work hides that load,
    // which the probe would otherwise wait for (the table keeps no eval to read instead).
    let raw_eval = if in_check {
        -INFINITY
    } else {
        s.evaluate(pos, ply)
    };

    // The table: a stored bound that settles the node ends it (outside PV lines).
    let key = pos.key();
    let is_pv_node = beta - alpha > 1;
    let original_alpha = alpha;
    // The TT-PV flag is only carried along here (stored as found, or set on a PV line).
    s.state.stack[ply].tt_pv = is_pv_node;
    if s.job.config.selective {
        if let Some(entry) = s.job.tt.probe(key) {
            let score = score_from_tt(entry.score, ply);
            let cuts = tt_bound_cuts(entry.bound, score, alpha, beta);
            if cuts && !is_pv_node {
                return score;
            }
            s.state.stack[ply].tt_pv |= entry.is_pv;
        }
    }

    let mut best_score;
    // The TT keeps the raw evaluation; the stand-pat score is the corrected one.
    if in_check {
        let moves = pos.legal_moves();
        if moves.is_empty() {
            return -MATE + ply as i32;
        }
        s.state.stack[ply].qsearch_moves.fill_evasions(&moves);
        best_score = -INFINITY;
    } else {
        // Stand pat: the side to move can usually do at least as well as doing nothing.
        let correction = s.read_correction(pos);
        best_score = correction.map_or(raw_eval, |(_, c)| corrected(raw_eval, c));
        if best_score >= beta {
            return best_score;
        }
        alpha = alpha.max(best_score);
        s.state.stack[ply].qsearch_moves.fill_tactical(pos.board());
    }

    let mut best_move = None;
    while let Some(m) = s.state.stack[ply].qsearch_moves.next_scored() {
        // Delta pruning: even winning the victim for free would leave us below alpha.
        // (Asked before the exchange below, which costs more and prunes the same way.)
        if !in_check
            && s.job.config.selective
            && m.promotion().is_none()
            && best_score + m.capture().map_or(0, piece_value) + DELTA_MARGIN.get() <= alpha
        {
            continue;
        }
        // A capture that loses material by exchange cannot raise a stand-pat score.
        if !in_check && s.job.config.selective && !see_at_least(pos.board(), m, 0) {
            continue;
        }
        pos.make_move(m);
        s.prefetch_entries(pos);
        let score = -qsearch(s, pos, ply + 1, -beta, -alpha);
        pos.unmake_move();
        if s.state.stopped {
            return 0;
        }
        if score > best_score {
            best_score = score;
            if score > alpha {
                alpha = score;
                best_move = Some(m);
                s.state.stack.update_pv(ply, m);
                if score >= beta {
                    break;
                }
            }
        }
    }
    if s.job.config.selective {
        let window = (best_score, original_alpha, beta);
        s.store_result(key, ply, 0, window, best_move);
    }
    best_score
}
