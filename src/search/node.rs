//! The main node search: fail-soft negamax with principal variation search.

use shakmaty::{Bitboard, Move, Position as _};

use super::correction::{corrected, worth_learning};
use super::history::{bonus, Context, PieceTo};
use super::movepick::{self, MovePicker};
use super::params::*;
use super::{qsearch, score_from_tt, tablebase_score, tt_bound_cuts, Searcher};
use crate::movegen;
use crate::position::Position;
use crate::score::*;
use crate::see::see_at_least;
use crate::tt::Bound;

/// Searches `pos` to `depth` plies and returns its fail-soft value within (alpha, beta).
/// `cut_node`: the node is expected to fail high (a non-PV node whose parent expects to
/// fail low), which reduces it more.
///
/// The steps below are numbered in the order they run; each comment says why the step is
/// sound, or sound enough for the depth it buys.
pub fn negamax(
    s: &mut Searcher,
    pos: &mut Position,
    mut depth: i32,
    ply: usize,
    mut alpha: i32,
    mut beta: i32,
    cut_node: bool,
) -> i32 {
    let is_root = ply == 0;
    let is_pv_node = beta - alpha > 1;
    s.state.stack[ply].pv_len = ply;

    // Step 1. Draws and the stack limit. A repetition, a dead position or the fifty-move
    // rule (unless the move that reached it mated) ends the game, so nothing below can
    // change the value. At the root the game goes on whatever the history: a move is owed.
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
                s.evaluate(pos, ply)
            };
        }
    }

    // Step 2. Mate distance pruning: a mate found closer to the root already beats anything
    // this node could return, so the window shrinks to what is still achievable from here,
    // and an empty window means nothing here can matter.
    if !is_root && s.job.config.refinements {
        alpha = alpha.max(-MATE + ply as i32);
        beta = beta.min(MATE - ply as i32 - 1);
        if alpha >= beta {
            return alpha;
        }
    }

    // Step 3. Check extension: a check must be answered, so the horizon moves one ply out
    // rather than judging a position where the mover is in check. Trimmed (Stockfish's
    // rule from version 8 to 12) to checks that keep their material: a checking piece that
    // simply hangs is usually a spite check, whose refutation needs no extra ply.
    let in_check = pos.in_check();
    if in_check
        && s.job.config.refinements
        && (!s.job.config.selective || check_extension_pays(pos))
    {
        depth += 1;
    }

    // Step 4. Horizon: quiescence resolves the captures first, as the static evaluation is
    // only to be trusted in a quiet position (the plain configuration takes it as it is).
    if depth <= 0 {
        return if s.job.config.refinements {
            qsearch::qsearch(s, pos, ply, alpha, beta)
        } else {
            leaf_value(s, pos, ply)
        };
    }

    s.state.nodes += 1;
    if s.should_abort() {
        return 0;
    }
    s.state.seldepth = s.state.seldepth.max(ply);
    // A child that is not a move of the loop below (the null move) inherits this line's
    // count of multiple extensions.
    s.state.stack[ply + 1].multi_extensions = s.state.stack[ply].multi_extensions;

    // Step 5. Transposition table: a stored result at least this deep whose bound settles
    // the window is this node's value, found before. Not at PV nodes, so the principal
    // variation is always searched and printed in full. A singular-extension search of this
    // node excludes the TT move: it neither uses nor stores the table, whose entry belongs
    // to the full node.
    //
    // The raw static evaluation (step 7's) is computed first, though a cutoff here may not
    // need it: the parent prefetched this node's bucket, and the evaluation's work hides
    // that load, which the probe would otherwise wait for (on the bench this costs less
    // than the waiting did; the table keeps no eval to read instead).
    let raw_eval = if in_check {
        -INFINITY
    } else {
        s.evaluate(pos, ply)
    };
    let excluded = s.state.stack[ply].excluded;
    let key = pos.key();
    let mut tt_move = None;
    let mut tt_entry = None;
    if s.job.config.use_tt && excluded.is_none() {
        s.state.stats.tt_probes += 1;
        if let Some(entry) = s.job.tt.probe(key) {
            s.state.stats.tt_hits += 1;
            tt_entry = Some(entry);
            if !is_pv_node && i32::from(entry.depth) >= depth {
                let score = score_from_tt(entry.score, ply);
                if tt_bound_cuts(entry.bound, score, alpha, beta) {
                    return score;
                }
            }
            // Unpacked and checked legal once, here, past the cutoff that needs no move.
            tt_move = movepick::tt_move(pos.board(), entry.mv);
        }
    }
    // TT-PV: a PV node, or one the table remembers as having been on a PV. Stored with the
    // node's result, so the flag outlives the PV it came from; a singular-extension search
    // of the node inherits it.
    let tt_pv = if excluded.is_some() {
        s.state.stack[ply].tt_pv
    } else {
        is_pv_node || tt_entry.is_some_and(|e| e.is_pv)
    };
    s.state.stack[ply].tt_pv = tt_pv;

    // Step 6. Tablebases: right after a capture or pawn move (the WDL tables assume a
    // fresh fifty-move clock) the tables know the game-theoretic result. A win or loss is a
    // bound (the exact distance is unknown), a draw is exact; a bound that settles the node
    // ends it, otherwise at PV nodes it limits the value the search may return.
    let mut tb_floor = -INFINITY;
    let mut tb_ceiling = INFINITY;
    if s.job.tablebases.cardinality > 0
        && !is_root
        && excluded.is_none()
        && depth >= s.job.tablebases.probe_depth
        && pos.board().halfmoves() == 0
        && s.job.tablebases.covers(pos.board())
    {
        if let Some(outcome) = s.job.tablebases.probe_wdl(pos.board()) {
            s.state.tb_hits += 1;
            let (score, bound) = tablebase_score(outcome, ply);
            if tt_bound_cuts(bound, score, alpha, beta) {
                s.store(key, ply, depth + TB_DEPTH_BONUS, (score, bound), None);
                return score;
            }
            if is_pv_node {
                match bound {
                    Bound::Lower => {
                        tb_floor = score;
                        alpha = alpha.max(score);
                    }
                    Bound::Upper => tb_ceiling = score,
                    Bound::Exact => {}
                }
            }
        }
    }

    // Step 7. Static evaluation, for the pruning steps that follow (none in check, where
    // the position is anything but quiet): the raw one of step 5, which the TT keeps,
    // shifted by the correction history by how far the searches of similar positions found
    // it off. Its entries are found once: the eval reads them here, the learning of step 18
    // writes them.
    let correction = if in_check {
        None
    } else {
        s.read_correction(pos)
    };
    let static_eval = if in_check {
        -INFINITY
    } else {
        correction.map_or(raw_eval, |(_, c)| corrected(raw_eval, c))
    };
    // "Improving": our static eval rose since our previous move, so pruning can be bolder
    // about quiet moves being useless only when it did not.
    s.state.stack[ply].static_eval = static_eval;
    let improving = !in_check && ply >= 2 && static_eval > s.state.stack[ply - 2].static_eval;
    // A TT bound that points past the eval is the better estimate of this node's value.
    let pruning_eval = match tt_entry {
        Some(entry) if s.job.config.selective && !in_check => {
            eval_bounded_by_tt(static_eval, score_from_tt(entry.score, ply), entry.bound)
        }
        _ => static_eval,
    };

    // Step 8. Reverse futility pruning: far enough above beta at shallow depth, the side to
    // move is very unlikely to fall below it whatever the opponent does in the few plies left.
    if s.job.config.selective
        && excluded.is_none()
        && !is_pv_node
        && !in_check
        && !is_root
        && depth <= RFP_MAX_DEPTH.get()
        && pruning_eval.abs() < MATE_BOUND
        && pruning_eval - RFP_MARGIN_PER_DEPTH.get() * (depth - i32::from(improving)) >= beta
    {
        return pruning_eval;
    }

    // Step 9. Null-move pruning: if passing still keeps us above beta after a reduced
    // search, a real move almost surely does too. Unsound in zugzwang, hence no null move
    // without pieces, in check, or twice in a row, and deep cutoffs are verified.
    if s.job.config.selective
        && ply >= s.state.null_move_min_ply
        && excluded.is_none()
        && !is_pv_node
        && !in_check
        && !is_root
        && depth >= NMP_MIN_DEPTH
        && pruning_eval >= beta
        && beta.abs() < MATE_BOUND
        && !pos.after_null_move()
        && pos.has_non_pawn_material()
    {
        let reduction = NMP_BASE_REDUCTION.get()
            + depth / NMP_DEPTH_DIVISOR.get()
            + ((pruning_eval - beta) / NMP_EVAL_DIVISOR.get()).min(NMP_MAX_EVAL_REDUCTION.get());
        if pos.make_null_move() {
            s.prefetch_entries(pos);
            let null_depth = depth - 1 - reduction;
            let score = -negamax(s, pos, null_depth, ply + 1, -beta, -beta + 1, !cut_node);
            pos.unmake_move();
            if s.state.stopped {
                return 0;
            }
            if score >= beta {
                // Mate scores from a null-move search are not proven: return beta instead.
                let score = if score >= MATE_BOUND { beta } else { score };
                if depth < NMP_VERIFICATION_DEPTH {
                    return score;
                }
                // The same node searched normally at reduced depth, with no null move
                // anywhere below it: a zugzwang that fooled the null move cannot fool it.
                let outer_min_ply = std::mem::replace(&mut s.state.null_move_min_ply, MAX_PLY);
                let verified = negamax(s, pos, depth - reduction, ply, beta - 1, beta, true);
                s.state.null_move_min_ply = outer_min_ply;
                if s.state.stopped {
                    return 0;
                }
                if verified >= beta {
                    return score;
                }
            }
        }
    }

    // Step 10. Move ordering: the earlier a good move comes, the sooner a cutoff ends the
    // node and the narrower the windows of the rest. Inner nodes pick in stages (TT move,
    // good captures, killers, counter-move, quiets by history, bad captures) and generate
    // only what they reach; the root orders its own list, which `searchmoves` and MultiPV
    // restrict.
    let turn = pos.turn();
    let killers = s.state.stack[ply].killers;
    let ctx = Context {
        previous: pos.recent_move(1).map(|m| PieceTo::of(!turn, m)),
        previous2: pos.recent_move(2).map(|m| PieceTo::of(turn, m)),
    };
    let counter = s.history.counter_move(&ctx);
    // A capture as the best move known here makes the quiet moves even less likely to
    // matter: they are reduced one ply more.
    // NOTE: an en passant TT move does not count, its target square being empty; counting
    // it (`m.is_capture()`) would change the search, so it waits for its own test.
    let tt_move_is_capture = tt_move.is_some_and(|m| pos.board().them().contains(m.to()));
    let use_see = s.job.config.selective;
    let mut picker = if is_root || !s.job.config.refinements {
        let moves = if is_root {
            s.state.root_moves.searched_by(s.state.pv_index).collect()
        } else {
            pos.legal_moves()
        };
        MovePicker::scored(pos.board(), moves, tt_move, killers, &s.history, use_see)
    } else {
        MovePicker::new(tt_move, killers, counter, use_see)
    };

    // Step 11. The moves, by principal variation search: the first (likely best) with the
    // full window, the rest with a null window that only proves them worse, which is
    // cheaper, and a move that is not worse is searched again with the full window.
    let original_alpha = alpha;
    let mut best_score = -INFINITY;
    let mut best_move: Option<Move> = None;
    // This ply's lists, taken out of the stack while the node runs (a singular search of
    // the same ply takes the emptied slot and allocates its own) and put back at the end.
    let mut tried = std::mem::take(&mut s.state.stack[ply].tried);
    tried.quiets.clear();
    tried.captures.clear();
    let mut move_count = 0;
    let mut skip_quiets = false;
    while let Some(m) = picker.next_move(pos.board(), &s.history, &ctx) {
        if Some(m) == excluded {
            continue;
        }
        let is_quiet = !m.is_capture() && m.promotion().is_none();
        if is_quiet && skip_quiets {
            continue;
        }
        move_count += 1;
        if is_root {
            s.start_root_move(m, move_count);
        }

        // Step 12. Singular extension: if every other move fails well below the TT move's
        // score in a reduced search, the TT move is the only good one and is searched a ply
        // deeper; two or three plies when the others fail far below (at non-PV nodes, a
        // bounded number of times per line). If even the others beat beta, the node is cut
        // (multi-cut). If they merely reach the singular beta, the TT move is not special:
        // when its own score holds beta, or the node is expected to cut anyway, another move
        // likely refutes as well, so the TT move is searched shallower (negative extension).
        let mut extension = 0;
        if s.job.config.selective
            && !is_root
            && depth >= SE_MIN_DEPTH
            && excluded.is_none()
            && Some(m) == tt_move
        {
            if let Some(entry) = tt_entry.filter(|e| {
                i32::from(e.depth) >= depth - SE_TT_DEPTH_MARGIN && e.bound != Bound::Upper
            }) {
                let tt_score = score_from_tt(entry.score, ply);
                if tt_score.abs() < MATE_BOUND {
                    let singular_beta = tt_score - SE_MARGIN_PER_DEPTH.get() * depth;
                    let (singular_alpha, half_depth) = (singular_beta - 1, (depth - 1) / 2);
                    s.state.stack[ply].excluded = Some(m);
                    let score = negamax(
                        s,
                        pos,
                        half_depth,
                        ply,
                        singular_alpha,
                        singular_beta,
                        cut_node,
                    );
                    s.state.stack[ply].excluded = None;
                    if s.state.stopped {
                        return 0;
                    }
                    if score < singular_beta {
                        extension = 1;
                        if !is_pv_node
                            && i32::from(s.state.stack[ply].multi_extensions)
                                < SE_MAX_MULTI_EXTENSIONS.get()
                            && score < singular_beta - SE_DOUBLE_MARGIN.get()
                        {
                            extension = 2;
                            if is_quiet && score < singular_beta - SE_TRIPLE_MARGIN.get() {
                                extension = 3;
                            }
                        }
                    } else if singular_beta >= beta {
                        return singular_beta;
                    } else if tt_score >= beta {
                        extension = -SE_NEGATIVE_EXTENSION.get();
                    } else if cut_node {
                        extension = -SE_CUT_NODE_NEGATIVE_EXTENSION.get();
                    }
                }
            }
        }
        let mut new_depth = depth - 1 + extension;

        // Step 13. Shallow-depth pruning, once no mate is at stake: late quiet moves (late
        // move pruning: well ordered, the quiets after the first few rarely matter near the
        // horizon), quiet moves far below alpha (futility) and moves that lose material by
        // exchange (SEE: too much to win back in the plies left). Once a move mates, the
        // rest are searched in full too: a shorter mate may be among them.
        let prune = s.job.config.selective
            && !is_root
            && best_score > -MATE_BOUND
            && best_score < MATE_BOUND;
        if prune
            && is_quiet
            && !in_check
            && !is_killer(killers, m)
            && depth <= LMP_MAX_DEPTH
            && move_count > late_move_limit(depth, improving)
        {
            skip_quiets = true;
            picker.skip_quiets();
            continue;
        }
        // Futility pruning: a quiet move that gives no check and cannot lift the eval to
        // alpha even by a margin growing with the depth is very unlikely to raise alpha.
        // Decided before the move is made (whether it checks is asked last, of the board as
        // it is), so a pruned move costs no make, unmake or prefetch; and before the SEE
        // test below, which costs more and prunes the same way.
        if prune
            && is_quiet
            && !in_check
            && depth <= FUTILITY_MAX_DEPTH
            && pruning_eval + FUTILITY_BASE.get() + FUTILITY_PER_DEPTH.get() * depth <= alpha
            && !movegen::gives_check(pos.board(), m)
        {
            continue;
        }
        if prune && depth <= SEE_PRUNE_MAX_DEPTH {
            let threshold = if is_quiet {
                SEE_PRUNE_QUIET_PER_DEPTH.get() * depth
            } else {
                SEE_PRUNE_CAPTURE_PER_DEPTH.get() * depth * depth
            };
            if !see_at_least(pos.board(), m, threshold) {
                continue;
            }
        }
        // A capture or promotion that wins much by exchange is never reduced (asked only of
        // the moves LMR could reduce; the exchange is judged before the move is made).
        let noisy_lmr = s.job.config.selective
            && !is_quiet
            && !in_check
            && depth >= LMR_MIN_DEPTH
            && move_count > lmr_min_moves(is_pv_node)
            && !see_at_least(pos.board(), m, LMR_NOISY_SEE_KEEP.get());

        // Step 14. Make the move, and start loading the child's table entries.
        let nodes_before = s.state.nodes;
        s.state.stack[ply + 1].multi_extensions =
            s.state.stack[ply].multi_extensions + u8::from(extension >= 2);
        pos.make_move(m);
        s.prefetch_entries(pos);
        let gives_check = pos.in_check();

        // Step 15. Late move reductions: well ordered, a late move is rarely best, so it is
        // first searched shallower (by the table, less for good history and more where the
        // node looks lost anyway) and searched again at full depth only if it beats alpha.
        let mut score;
        if move_count == 1 {
            let child_cut = !is_pv_node && !cut_node;
            score = -negamax(s, pos, new_depth, ply + 1, -beta, -alpha, child_cut);
        } else {
            // Terms of both kinds of move: more at expected cut nodes; less at nodes that were
            // on a PV, as at PV nodes, which have their ply less in `late_move_reduction`
            // already (stacking both there makes the bench tree about half as large again).
            let node_terms =
                i32::from(cut_node) - i32::from(tt_pv && !is_pv_node) * LMR_TT_PV_PLIES;
            let reduction = if s.job.config.selective && is_quiet && !in_check {
                let history = s.history.quiet_score(turn, m, &ctx);
                let is_refutation = is_killer(killers, m) || counter == Some(m);
                (late_move_reduction(depth, move_count, is_pv_node, gives_check)
                    - history / LMR_HISTORY_DIVISOR.get()
                    - i32::from(is_refutation)
                    + node_terms
                    + i32::from(!improving && !is_pv_node)
                    + i32::from(tt_move_is_capture))
                .clamp(0, (depth - 2).max(0))
            } else if noisy_lmr {
                // Captures and promotions are likelier to matter than quiets: reduced less
                // than the table says, and by their capture history.
                let history = s.history.capture_score(turn, m);
                (noisy_reduction(depth, move_count, is_pv_node, gives_check, history) + node_terms)
                    .clamp(0, (depth - 2).max(0))
            } else {
                0
            };
            let reduced_depth = new_depth - reduction;
            score = -negamax(s, pos, reduced_depth, ply + 1, -alpha - 1, -alpha, true);
            if score > alpha && reduction > 0 {
                // How far the reduced score beat the best one says how much to trust it:
                // by a lot, the move may be better still (search it deeper); barely, the
                // full depth is likely enough to refute it (search it shallower). A re-search
                // no deeper than the reduced one would learn nothing and is skipped.
                new_depth += research_depth_adjustment(score, best_score, new_depth);
                if new_depth > reduced_depth {
                    score = -negamax(s, pos, new_depth, ply + 1, -alpha - 1, -alpha, !cut_node);
                    // The re-search is the better verdict on the move in this context: its
                    // continuation history learns whether it held up. (Only quiet moves are
                    // ordered by continuation history.)
                    if is_quiet && !s.state.stopped {
                        let b = bonus(new_depth);
                        let b = if score > alpha { b } else { -b };
                        s.history.update_continuation(turn, m, b, &ctx);
                    }
                }
            }
            if score > alpha && score < beta {
                score = -negamax(s, pos, new_depth, ply + 1, -beta, -alpha, false);
            }
        }
        pos.unmake_move();
        if s.state.stopped {
            return 0;
        }
        if is_root {
            s.state
                .root_moves
                .add_nodes(m, s.state.nodes - nodes_before);
        }

        // Step 16. A new best move: it extends the PV; at a cutoff the histories reward it
        // and punish the moves tried before it, so the next node like this one tries it
        // first, and the rest of the moves need no search (fail-soft: the score stands).
        if score > best_score {
            best_score = score;
            if score > alpha {
                best_move = Some(m);
                alpha = score;
                s.state.stack.update_pv(ply, m);
                if score >= beta {
                    s.state.stats.beta_cutoffs += 1;
                    if move_count == 1 {
                        s.state.stats.first_move_cutoffs += 1;
                    }
                    if is_quiet {
                        s.history
                            .update_quiet_cutoff(turn, depth, m, &tried.quiets, &ctx);
                        s.state.stack[ply].add_killer(m);
                    } else {
                        s.history
                            .update_capture_cutoff(turn, depth, m, &tried.captures);
                    }
                    break;
                }
            }
        }
        if is_quiet {
            tried.quiets.push(m);
        } else if m.is_capture() {
            tried.captures.push(m);
        }
    }
    s.state.stack[ply].tried = tried;

    // Step 17. No move searched: checkmate or stalemate, or in a singular search, the TT
    // move was the only legal move, which makes it singular by definition.
    if move_count == 0 {
        if excluded.is_some() {
            return alpha;
        }
        return if in_check { -MATE + ply as i32 } else { DRAW };
    }
    best_score = best_score.clamp(tb_floor, tb_ceiling);

    // Step 18. The correction history learns how far the static eval was off, where the
    // result says so: an exact score, or a bound on the side the eval was wrong.
    if let Some((keys, _)) = &correction {
        if excluded.is_none()
            && !(is_root && s.state.pv_index > 0)
            && worth_learning(
                pos.board(),
                best_move,
                best_score,
                static_eval,
                best_score >= beta,
                best_score <= original_alpha,
            )
        {
            s.correction
                .update(turn, keys, depth, best_score - static_eval);
        }
    }

    // Step 19. Remember the result with the kind of bound it is, for the next visit and
    // for the move ordering of the next iteration. Not at the root of a MultiPV line after
    // the first: that search left the best moves out. (The null-move verification, a
    // search of this node at this ply, may have rewritten the TT-PV flag.)
    s.state.stack[ply].tt_pv = tt_pv;
    if s.job.config.use_tt && excluded.is_none() && !(is_root && s.state.pv_index > 0) {
        let window = (best_score, original_alpha, beta);
        s.store_result(key, ply, depth, window, best_move);
    }
    best_score
}

/// The value of a horizon node without quiescence: terminal states are scored exactly,
/// everything else by the static evaluation.
fn leaf_value(s: &mut Searcher, pos: &Position, ply: usize) -> i32 {
    s.state.nodes += 1;
    if pos.legal_moves().is_empty() {
        return if pos.in_check() {
            -MATE + ply as i32
        } else {
            DRAW
        };
    }
    s.evaluate(pos, ply)
}

/// Whether the check the side to move is in earns the check extension: the checking move
/// (the last one) gave a discovered or double check, or does not lose material by exchange
/// on its square. A check without a known last move (the root of a search from a FEN)
/// is extended.
fn check_extension_pays(pos: &Position) -> bool {
    let (Some(m), Some((before, _))) = (pos.recent_move(1), pos.board_back(1)) else {
        return true;
    };
    // The moved piece stands on `to`; any other checker was uncovered by the move (or is
    // the rook of a castling move, which risks nothing either).
    let discovered = (pos.board().checkers() & !Bitboard::from(m.to())).any();
    discovered || see_at_least(before, m, CHECK_EXTENSION_SEE_THRESHOLD)
}

/// Whether `m` is one of the ply's killers: two comparisons written out, which inline where
/// a slice `contains` is a call.
#[inline(always)]
fn is_killer(killers: [Option<Move>; 2], m: Move) -> bool {
    killers[0] == Some(m) || killers[1] == Some(m)
}

fn is_checkmate(pos: &Position) -> bool {
    pos.in_check() && pos.board().legal_moves().is_empty()
}

/// Depth reduction for a late quiet move (the table's); never so much that the move drops
/// straight into quiescence, and less at PV nodes and for moves that give check.
fn late_move_reduction(depth: i32, move_count: usize, is_pv_node: bool, gives_check: bool) -> i32 {
    if depth < LMR_MIN_DEPTH || move_count <= lmr_min_moves(is_pv_node) {
        return 0;
    }
    let mut r = lmr_reduction(depth as usize, move_count);
    if is_pv_node {
        r -= 1;
    }
    if gives_check {
        r -= 1;
    }
    r.clamp(0, depth - 2)
}

/// Depth reduction for a late capture or promotion, before the node's terms: the quiet
/// move's less LMR_NOISY_DISCOUNT, and a ply less per LMR_CAPTURE_HISTORY_DIVISOR of capture
/// history (a ply more per as much bad history). Zero where no move is reduced.
fn noisy_reduction(
    depth: i32,
    move_count: usize,
    is_pv_node: bool,
    gives_check: bool,
    capture_history: i32,
) -> i32 {
    if depth < LMR_MIN_DEPTH || move_count <= lmr_min_moves(is_pv_node) {
        return 0;
    }
    late_move_reduction(depth, move_count, is_pv_node, gives_check)
        - LMR_NOISY_DISCOUNT.get()
        - capture_history / LMR_CAPTURE_HISTORY_DIVISOR.get()
}

/// How many moves a node searches before LMR starts.
fn lmr_min_moves(is_pv_node: bool) -> usize {
    if is_pv_node {
        LMR_MIN_MOVES_PV
    } else {
        LMR_MIN_MOVES
    }
}

/// The re-search after a reduced search beat alpha: +1 ply when the reduced score beat the
/// best score so far by more than a margin that grows with the depth, -1 when it beat it by
/// less than LMR_SHALLOWER_MARGIN, 0 otherwise.
fn research_depth_adjustment(score: i32, best_score: i32, new_depth: i32) -> i32 {
    if score > best_score + LMR_DEEPER_BASE.get() + LMR_DEEPER_PER_DEPTH.get() * new_depth {
        1
    } else if score < best_score + LMR_SHALLOWER_MARGIN.get() {
        -1
    } else {
        0
    }
}

/// Late move pruning: how many moves a shallow node searches before dropping the remaining
/// quiet moves; fewer when the position is not improving.
fn late_move_limit(depth: i32, improving: bool) -> usize {
    let limit = (LMP_BASE.get() + depth * depth) as usize;
    if improving {
        limit
    } else {
        limit / 2
    }
}

/// The TT score replaces the static eval when its bound points past it: a lower bound
/// above the eval or an upper bound below it is a better estimate of this node's value.
fn eval_bounded_by_tt(static_eval: i32, tt_score: i32, bound: Bound) -> i32 {
    if tt_score.abs() >= MATE_BOUND {
        return static_eval;
    }
    let better = match bound {
        Bound::Exact => true,
        Bound::Lower => tt_score > static_eval,
        Bound::Upper => tt_score < static_eval,
    };
    if better {
        tt_score
    } else {
        static_eval
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tt_score_replaces_the_eval_only_when_its_bound_points_past_it() {
        assert_eq!(eval_bounded_by_tt(50, 120, Bound::Lower), 120);
        assert_eq!(eval_bounded_by_tt(50, 20, Bound::Lower), 50);
        assert_eq!(eval_bounded_by_tt(50, 20, Bound::Upper), 20);
        assert_eq!(eval_bounded_by_tt(50, 120, Bound::Upper), 50);
        assert_eq!(eval_bounded_by_tt(50, -30, Bound::Exact), -30);
        assert_eq!(eval_bounded_by_tt(50, MATE - 3, Bound::Exact), 50);
    }

    fn after(fen: &str, uci: &str) -> Position {
        let mut pos = Position::from_fen(fen, false).unwrap();
        let m = pos.parse_uci_move(uci).unwrap();
        pos.make_move(m);
        assert!(pos.in_check(), "{uci} gives check");
        pos
    }

    #[test]
    fn check_extension_skips_checks_that_hang_the_checking_piece() {
        // Qa4+ walks into the rook on a7.
        let hanging = after("4k3/r7/8/8/8/8/8/Q3K3 w - - 0 1", "a1a4");
        assert!(!check_extension_pays(&hanging));
        // Rh8+ cannot be taken.
        let safe = after("r3k3/8/8/8/8/8/8/4K2R w - - 0 1", "h1h8");
        assert!(check_extension_pays(&safe));
        // Bb7 hangs the bishop but uncovers the rook's check on the e-file.
        let discovered = after("4k3/r7/8/8/4B3/8/8/4R1K1 w - - 0 1", "e4b7");
        assert!(check_extension_pays(&discovered));
        // A check with no move before it (a FEN root) is extended.
        let root = Position::from_fen("4k3/8/8/8/8/8/8/4R1K1 b - - 0 1", false).unwrap();
        assert!(check_extension_pays(&root));
    }

    #[test]
    fn research_goes_deeper_by_a_margin_and_shallower_when_barely_above() {
        let deeper = |d: i32| LMR_DEEPER_BASE.get() + LMR_DEEPER_PER_DEPTH.get() * d;
        for new_depth in [1, 5, 12, 30] {
            for best in [-MATE + 10, -300, 0, 45] {
                let margin = deeper(new_depth);
                assert_eq!(
                    research_depth_adjustment(best + margin + 1, best, new_depth),
                    1
                );
                assert_eq!(research_depth_adjustment(best + margin, best, new_depth), 0);
                let shallow = LMR_SHALLOWER_MARGIN.get();
                assert_eq!(
                    research_depth_adjustment(best + shallow, best, new_depth),
                    0
                );
                assert_eq!(
                    research_depth_adjustment(best + shallow - 1, best, new_depth),
                    -1
                );
                assert_eq!(research_depth_adjustment(best + 1, best, new_depth), -1);
            }
        }
        // The margin for a ply more grows with the depth.
        assert!(deeper(20) > deeper(2));
    }

    #[test]
    fn captures_are_reduced_less_than_quiets_and_less_with_good_history() {
        for depth in 1..40 {
            for moves in 1..60 {
                for pv in [false, true] {
                    let quiet = late_move_reduction(depth, moves, pv, false);
                    let noisy = noisy_reduction(depth, moves, pv, false, 0);
                    if depth < LMR_MIN_DEPTH || moves <= lmr_min_moves(pv) {
                        assert_eq!(noisy, 0);
                        continue;
                    }
                    assert_eq!(noisy, quiet - LMR_NOISY_DISCOUNT.get());
                    let step = LMR_CAPTURE_HISTORY_DIVISOR.get();
                    assert_eq!(
                        noisy_reduction(depth, moves, pv, false, 2 * step),
                        noisy - 2
                    );
                    assert_eq!(noisy_reduction(depth, moves, pv, false, -step), noisy + 1);
                    assert_eq!(noisy_reduction(depth, moves, pv, false, step - 1), noisy);
                }
            }
        }
    }
}
