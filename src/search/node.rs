//! The main node search: fail-soft negamax with principal variation search.

use shakmaty::{Move, Position as _};

use super::params::*;
use super::{qsearch, score_from_tt, score_to_tt, Searcher};
use crate::eval::evaluate;
use crate::movepick::MovePicker;
use crate::position::Position;
use crate::tt::{Bound, PackedMove, TtEntry};

/// Searches `pos` to `depth` plies and returns its fail-soft value within (alpha, beta).
pub fn negamax(
    s: &mut Searcher,
    pos: &mut Position,
    mut depth: i32,
    ply: usize,
    mut alpha: i32,
    beta: i32,
) -> i32 {
    let is_root = ply == 0;
    let is_pv_node = beta - alpha > 1;
    s.pv_len[ply] = ply;

    // Step 1. Draws and the stack limit. At the root the game goes on whatever the history.
    if !is_root {
        if pos.is_repetition() || pos.is_insufficient_material() {
            return DRAW;
        }
        if pos.is_fifty_move_draw() && !is_checkmate(pos) {
            return DRAW;
        }
        if ply >= MAX_PLY - 1 {
            return if pos.in_check() {
                DRAW
            } else {
                evaluate(pos.board())
            };
        }
    }

    // Step 2. Check extension: a check must be answered, so the horizon moves one ply out
    // rather than judging a position where the mover is in check.
    let in_check = pos.in_check();
    if in_check && s.config.check_extension {
        depth += 1;
    }

    // Step 3. Horizon: quiescence (or the bare evaluation in the plain configuration).
    if depth <= 0 {
        return if s.config.qsearch {
            qsearch::qsearch(s, pos, ply, alpha, beta)
        } else {
            leaf_value(s, pos, ply)
        };
    }

    s.nodes += 1;
    if s.should_abort() {
        return 0;
    }
    s.seldepth = s.seldepth.max(ply);

    // Step 4. Transposition table: a deep enough bound that settles this node ends it. Not
    // at PV nodes, so the principal variation is always searched and printed in full.
    let key = pos.key();
    let mut tt_move = PackedMove::NONE;
    let mut tt_eval = None;
    if s.config.use_tt {
        s.stats.tt_probes += 1;
        if let Some(entry) = s.tt.probe(key) {
            s.stats.tt_hits += 1;
            tt_move = entry.mv;
            tt_eval = Some(i32::from(entry.eval));
            if !is_pv_node && i32::from(entry.depth) >= depth {
                let score = score_from_tt(entry.score, ply);
                let cuts = match entry.bound {
                    Bound::Exact => true,
                    Bound::Lower => score >= beta,
                    Bound::Upper => score <= alpha,
                };
                if cuts {
                    return score;
                }
            }
        }
    }
    let static_eval = if in_check {
        -INFINITY
    } else {
        tt_eval.unwrap_or_else(|| evaluate(pos.board()))
    };

    // Step 5. Moves. No legal move is mate or stalemate.
    let moves = if is_root {
        s.root_moves.iter().copied().collect()
    } else {
        pos.legal_moves()
    };
    if moves.is_empty() {
        return if in_check { -MATE + ply as i32 } else { DRAW };
    }
    let turn = pos.turn();
    let killers = s.history.killers(ply);
    let mut picker = MovePicker::new(moves, tt_move, killers, &s.history, turn);

    // Step 6. Principal variation search: the first move with the full window, the rest
    // with a null window that only proves them worse, re-searched when one is not.
    let original_alpha = alpha;
    let mut best_score = -INFINITY;
    let mut best_move: Option<Move> = None;
    let mut quiets_tried: Vec<Move> = Vec::with_capacity(32);
    let mut move_count = 0;
    while let Some(m) = picker.next_move() {
        move_count += 1;
        pos.make_move(m);
        let mut score;
        if move_count == 1 {
            score = -negamax(s, pos, depth - 1, ply + 1, -beta, -alpha);
        } else {
            score = -negamax(s, pos, depth - 1, ply + 1, -alpha - 1, -alpha);
            if score > alpha && score < beta {
                score = -negamax(s, pos, depth - 1, ply + 1, -beta, -alpha);
            }
        }
        pos.unmake_move();
        if s.stopped {
            return 0;
        }

        if score > best_score {
            best_score = score;
            if score > alpha {
                best_move = Some(m);
                alpha = score;
                s.update_pv(ply, m);
                if score >= beta {
                    s.stats.beta_cutoffs += 1;
                    if move_count == 1 {
                        s.stats.first_move_cutoffs += 1;
                    }
                    if !m.is_capture() && m.promotion().is_none() {
                        s.history.update_quiets(turn, ply, depth, m, &quiets_tried);
                    }
                    break;
                }
            }
        }
        if !m.is_capture() && m.promotion().is_none() {
            quiets_tried.push(m);
        }
    }

    // Step 7. Remember the result with the kind of bound it is.
    if s.config.use_tt {
        let bound = if best_score >= beta {
            Bound::Lower
        } else if best_score > original_alpha {
            Bound::Exact
        } else {
            Bound::Upper
        };
        s.tt.store(
            key,
            TtEntry {
                mv: best_move.map_or(PackedMove::NONE, PackedMove::from_move),
                score: score_to_tt(best_score, ply),
                eval: static_eval.clamp(-MATE_BOUND, MATE_BOUND) as i16,
                depth: depth.clamp(0, 255) as u8,
                bound,
            },
        );
    }
    best_score
}

/// The value of a horizon node without quiescence: terminal states are scored exactly,
/// everything else by the static evaluation.
fn leaf_value(s: &mut Searcher, pos: &Position, ply: usize) -> i32 {
    s.nodes += 1;
    if pos.legal_moves().is_empty() {
        return if pos.in_check() {
            -MATE + ply as i32
        } else {
            DRAW
        };
    }
    evaluate(pos.board())
}

fn is_checkmate(pos: &Position) -> bool {
    pos.in_check() && pos.board().legal_moves().is_empty()
}
