//! Move ordering: one `MovePicker` with three stage families. Inner nodes go through the
//! staged main family: the TT move is tried before anything is generated, then good
//! captures, killers, the counter-move, quiet moves by history, and losing captures last
//! (in check the same stages, over the evasions). Within a stage moves are picked
//! best-first one at a time, so a cutoff does not pay for sorting (or generating) the
//! rest. The root (its own list, which `searchmoves` and MultiPV restrict), nodes searched
//! without the refinements, and quiescence use the scored family: a list scored at once
//! and picked best-first. The families score captures differently, as they always have:
//! the main one by `mvv_lva * 8` plus capture history, the root's by `ORDER_CAPTURE +
//! mvv_lva`, quiescence's by MVV-LVA and the promotion.

use shakmaty::{Bitboard, Chess, Move, MoveList, Position, Role};

use super::history::{Context, History, QuietScorer};
use crate::movegen;
use crate::score::piece_value;
use crate::see::see_at_least;
use crate::tt::PackedMove;

/// Move ordering scores (higher is searched first).
pub const ORDER_TT_MOVE: i32 = 4_000_000;
pub const ORDER_CAPTURE: i32 = 2_000_000;
pub const ORDER_PROMOTION: i32 = 1_900_000;
pub const ORDER_KILLER_1: i32 = 1_800_000;
pub const ORDER_KILLER_2: i32 = 1_799_000;
/// Captures that lose material by SEE come after every quiet move.
pub const ORDER_BAD_CAPTURE: i32 = -2_000_000;

/// MVV-LVA: most valuable victim first, least valuable attacker among equals.
#[inline]
pub fn mvv_lva(m: Move) -> i32 {
    // A move that takes nothing (a promotion, an evasion) counts as taking a pawn.
    let victim = m.capture().unwrap_or(Role::Pawn);
    piece_value(victim) * 16 - piece_value(m.role()) / 16
}

/// How many low bits of an order key hold the move's slot (a move list holds up to 256).
const SLOT_BITS: u32 = 8;
const SLOT_MASK: i32 = (1 << SLOT_BITS) - 1;

/// A move's score with its slot in the list in the low bits, inverted so that of equal
/// scores the earlier slot has the larger key: the plain maximum of the keys is then the
/// first best-scored move, the one a scan keeping the first maximum would pick, and no
/// second pass is needed to find where it is. Every ordering score is within +-2^22
/// (ORDER_TT_MOVE is 4,000,000), so the shifted score fits an i32.
#[inline]
fn order_key(score: i32, slot: usize) -> i32 {
    debug_assert!(score.abs() < 1 << (31 - SLOT_BITS - 1), "{score}");
    score * (1 << SLOT_BITS) + (SLOT_MASK - slot as i32)
}

#[inline]
fn slot_of(key: i32) -> usize {
    (SLOT_MASK - (key & SLOT_MASK)) as usize
}

/// Picks the highest-keyed move left in `moves[next..]` (see `order_key`), swapping it
/// into place. The move it displaces takes the picked one's slot, and its key says so.
#[inline]
fn pick_best(moves: &mut MoveList, keys: &mut [i32; 256], next: usize) -> Option<Move> {
    // A branch-free maximum, which the compiler vectorizes.
    let best_key = keys.get(next..moves.len())?.iter().copied().max()?;
    let best = slot_of(best_key);
    moves.swap(next, best);
    keys[best] = (keys[next] & !SLOT_MASK) | (SLOT_MASK - best as i32);
    Some(moves[next])
}

/// The TT move of this board: the packed move rebuilt and checked legal, once, where the
/// table is probed. The table may hold a move of another position with the same key bits,
/// so a packed move is only ever used once found legal here.
pub fn tt_move(board: &Chess, packed: PackedMove) -> Option<Move> {
    unpack_move(board, packed).filter(|&m| movegen::is_legal(board, m))
}

/// Rebuilds a full move from its packed TT form on this board; `None` if the squares do
/// not hold a move of the side to move. Legality is checked by `tt_move`.
fn unpack_move(board: &Chess, packed: PackedMove) -> Option<Move> {
    if packed.is_none() {
        return None;
    }
    let from = packed.from_square();
    let to = packed.to_square();
    let pieces = board.board();
    let us = board.turn();
    let piece = pieces.piece_at(from).filter(|p| p.color == us)?;
    let target = pieces.piece_at(to);
    if piece.role == Role::King && target.is_some_and(|t| t.color == us && t.role == Role::Rook) {
        return Some(Move::Castle {
            king: from,
            rook: to,
        });
    }
    if target.is_some_and(|t| t.color == us) {
        return None;
    }
    if piece.role == Role::Pawn && target.is_none() && from.file() != to.file() {
        return Some(Move::EnPassant { from, to });
    }
    Some(Move::Normal {
        role: piece.role,
        from,
        capture: target.map(|t| t.role),
        to,
        promotion: packed.promotion(),
    })
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Stage {
    TtMove,
    GenerateCaptures,
    GoodCaptures,
    Killer1,
    Killer2,
    CounterMove,
    GenerateQuiets,
    Quiets,
    BadCaptures,
    Done,
    /// The scored family: the whole list, scored at once, in `captures`.
    Scored,
}

/// The move picker. In the main family every legal move is returned exactly once (the TT
/// move, killers and counter-move are skipped in the later stages that would repeat them);
/// in the scored family every move of the list given.
pub struct MovePicker {
    stage: Stage,
    tt_move: Option<Move>,
    killers: [Option<Move>; 2],
    counter: Option<Move>,
    /// Captures (in the scored family, the whole list); the slots before `next_capture` are reused for the losing captures found
    /// so far (`bad_count` of them, in the order found), which are tried last.
    captures: MoveList,
    next_capture: usize,
    bad_count: usize,
    next_bad: usize,
    /// The legal non-captures: generated with the captures when in check (one evasion
    /// generation serves both), otherwise only once the quiet stage is reached.
    quiets: MoveList,
    quiets_generated: bool,
    next_quiet: usize,
    /// Order keys (`order_key`) of the capture stage, then of the quiet stage (never
    /// needed at once).
    keys: [i32; 256],
    skip_quiets: bool,
    use_see: bool,
}

impl MovePicker {
    /// `tt_move` is legal here (`tt_move` of the probe).
    pub fn new(
        tt_move: Option<Move>,
        killers: [Option<Move>; 2],
        counter: Option<Move>,
        use_see: bool,
    ) -> MovePicker {
        MovePicker {
            stage: Stage::TtMove,
            tt_move,
            killers,
            counter,
            captures: MoveList::new(),
            next_capture: 0,
            bad_count: 0,
            next_bad: 0,
            quiets: MoveList::new(),
            quiets_generated: false,
            next_quiet: 0,
            keys: [0; 256],
            skip_quiets: false,
            use_see,
        }
    }

    /// The scored family over a full move list (the root's, or a node's searched without
    /// the refinements): TT move, captures (losing ones last with `use_see`), promotions,
    /// killers, then quiets by history.
    pub fn scored(
        board: &Chess,
        moves: MoveList,
        tt_move: Option<Move>,
        killers: [Option<Move>; 2],
        history: &History,
        use_see: bool,
    ) -> MovePicker {
        let turn = board.turn();
        let ctx = Context::default();
        let mut picker = MovePicker::new(tt_move, killers, None, use_see);
        picker.stage = Stage::Scored;
        for (i, &m) in moves.iter().enumerate() {
            let score = if Some(m) == tt_move {
                ORDER_TT_MOVE
            } else if m.is_capture() {
                if !use_see || see_at_least(board, m, 0) {
                    ORDER_CAPTURE + mvv_lva(m)
                } else {
                    ORDER_BAD_CAPTURE + mvv_lva(m)
                }
            } else if m.promotion().is_some() {
                ORDER_PROMOTION + piece_value(m.promotion().unwrap_or(Role::Pawn))
            } else if Some(m) == killers[0] {
                ORDER_KILLER_1
            } else if Some(m) == killers[1] {
                ORDER_KILLER_2
            } else {
                history.quiet_score(turn, m, &ctx)
            };
            picker.keys[i] = order_key(score, i);
        }
        picker.captures = moves;
        picker
    }

    /// An empty scored picker, to be filled by `fill_tactical` or `fill_evasions`
    /// (quiescence keeps one per ply and refills it in place).
    pub fn empty() -> MovePicker {
        let mut picker = MovePicker::new(None, [None; 2], None, false);
        picker.stage = Stage::Done;
        picker
    }

    /// The quiescence family of a quiet position, in this picker's storage: captures, then
    /// quiet queen promotions (under-promotions almost never change the score), generated
    /// without the quiet moves.
    #[inline]
    pub fn fill_tactical(&mut self, board: &Chess) {
        self.captures.clear();
        movegen::tactical_moves(board, &mut self.captures);
        self.score_tactical();
    }

    /// The quiescence family in check: every move in `moves` (the evasions), ordered by
    /// MVV-LVA (promotions by the new piece too), in this picker's storage.
    #[inline]
    pub fn fill_evasions(&mut self, moves: &MoveList) {
        self.captures.clear();
        self.captures.extend(moves.iter().copied());
        self.score_tactical();
    }

    #[inline]
    fn score_tactical(&mut self) {
        self.stage = Stage::Scored;
        self.next_capture = 0;
        for (i, &m) in self.captures.iter().enumerate() {
            let score = mvv_lva(m) + m.promotion().map_or(0, piece_value);
            self.keys[i] = order_key(score, i);
        }
    }

    /// The next move of a scored picker (the root, an unrefined node, quiescence), which
    /// needs neither the board nor the histories.
    #[inline]
    pub fn next_scored(&mut self) -> Option<Move> {
        debug_assert!(matches!(self.stage, Stage::Scored | Stage::Done));
        let m = pick_best(&mut self.captures, &mut self.keys, self.next_capture)?;
        self.next_capture += 1;
        Some(m)
    }

    /// Late move pruning: no more quiet moves from this node (killers included).
    pub fn skip_quiets(&mut self) {
        self.skip_quiets = true;
    }

    fn is_special(&self, m: Move) -> bool {
        Some(m) == self.tt_move
            || Some(m) == self.killers[0]
            || Some(m) == self.killers[1]
            || Some(m) == self.counter
    }

    /// A killer or counter-move is only tried if it is a legal quiet move here.
    fn usable_quiet(&self, board: &Chess, m: Option<Move>) -> Option<Move> {
        let m = m?;
        if self.skip_quiets || m.is_capture() || Some(m) == self.tt_move {
            return None;
        }
        // A legal move equal to `m` is a quiet one: its capture field matches too.
        let legal = if self.quiets_generated {
            // The destination first: one square compared per move, the whole move only
            // where it matches.
            let to = m.to();
            self.quiets.iter().any(|&q| q.to() == to && q == m)
        } else {
            movegen::is_legal(board, m)
        };
        legal.then_some(m)
    }

    pub fn next_move(&mut self, board: &Chess, history: &History, ctx: &Context) -> Option<Move> {
        loop {
            match self.stage {
                Stage::TtMove => {
                    self.stage = Stage::GenerateCaptures;
                    if self.tt_move.is_some() {
                        return self.tt_move;
                    }
                }
                Stage::GenerateCaptures => {
                    self.generate_captures(board, history);
                    self.stage = Stage::GoodCaptures;
                }
                Stage::GoodCaptures => {
                    match pick_best(&mut self.captures, &mut self.keys, self.next_capture) {
                        Some(m) => {
                            self.next_capture += 1;
                            if Some(m) == self.tt_move {
                                continue;
                            }
                            if self.use_see && !see_at_least(board, m, 0) {
                                // Slot bad_count < next_capture was picked already.
                                self.captures[self.bad_count] = m;
                                self.bad_count += 1;
                                continue;
                            }
                            return Some(m);
                        }
                        None => self.stage = Stage::Killer1,
                    }
                }
                Stage::Killer1 => {
                    self.stage = Stage::Killer2;
                    if let Some(m) = self.usable_quiet(board, self.killers[0]) {
                        return Some(m);
                    }
                }
                Stage::Killer2 => {
                    self.stage = Stage::CounterMove;
                    if self.killers[1] != self.killers[0] {
                        if let Some(m) = self.usable_quiet(board, self.killers[1]) {
                            return Some(m);
                        }
                    }
                }
                Stage::CounterMove => {
                    self.stage = Stage::GenerateQuiets;
                    if self.counter != self.killers[0] && self.counter != self.killers[1] {
                        if let Some(m) = self.usable_quiet(board, self.counter) {
                            return Some(m);
                        }
                    }
                }
                Stage::GenerateQuiets => {
                    self.stage = Stage::Quiets;
                    if !self.skip_quiets {
                        if !self.quiets_generated {
                            movegen::quiets(board, &mut self.quiets);
                            self.quiets_generated = true;
                        }
                        self.score_quiets(board, history, ctx);
                    }
                }
                Stage::Quiets => {
                    if self.skip_quiets {
                        self.stage = Stage::BadCaptures;
                        continue;
                    }
                    match pick_best(&mut self.quiets, &mut self.keys, self.next_quiet) {
                        Some(m) => {
                            self.next_quiet += 1;
                            return Some(m);
                        }
                        None => self.stage = Stage::BadCaptures,
                    }
                }
                Stage::BadCaptures => {
                    if self.next_bad < self.bad_count {
                        self.next_bad += 1;
                        return Some(self.captures[self.next_bad - 1]);
                    }
                    self.stage = Stage::Done;
                }
                Stage::Done => return None,
                Stage::Scored => return self.next_scored(),
            }
        }
    }

    /// Generates and scores the captures (in check, every evasion, the quiet ones put
    /// aside for their stage). Once a node, so kept out of `next_move`, whose every call
    /// would otherwise pay for setting up what only this needs.
    #[inline(never)]
    fn generate_captures(&mut self, board: &Chess, history: &History) {
        if board.is_check() {
            // One evasion generation serves the captures and the quiets.
            for &m in board.legal_moves().iter() {
                if m.is_capture() {
                    self.captures.push(m);
                } else {
                    self.quiets.push(m);
                }
            }
            self.quiets_generated = true;
        } else {
            movegen::captures(board, &mut self.captures);
        }
        let turn = board.turn();
        for (i, &m) in self.captures.iter().enumerate() {
            let score = mvv_lva(m) * 8 + history.capture_score(turn, m);
            self.keys[i] = order_key(score, i);
        }
    }

    /// Drops the moves tried already from the generated non-captures and scores the rest.
    /// Out of line for the reason `generate_captures` is.
    #[inline(never)]
    fn score_quiets(&mut self, board: &Chess, history: &History, ctx: &Context) {
        let scorer = history.quiet_scorer(board.turn(), ctx);
        // Where the TT move, killers and counter-move go: a move going elsewhere is none of
        // them, which one bit test tells, and only the rest are compared in full.
        let special_targets = [self.tt_move, self.killers[0], self.killers[1], self.counter]
            .into_iter()
            .flatten()
            .fold(Bitboard::EMPTY, |targets, m| targets.with(m.to()));
        let mut n = 0;
        for i in 0..self.quiets.len() {
            let m = self.quiets[i];
            // The TT move, killers and counter-move were tried (or found illegal) already.
            if special_targets.contains(m.to()) && self.is_special(m) {
                continue;
            }
            self.keys[n] = order_key(quiet_order_score(&scorer, m), n);
            self.quiets[n] = m;
            n += 1;
        }
        self.quiets.truncate(n);
    }
}

/// The order score of a generated non-capture: a queen promotion comes with the captures,
/// an under-promotion with the losing captures, any other move by its history. The move is
/// taken apart once, here.
#[inline(always)]
fn quiet_order_score(scorer: &QuietScorer, m: Move) -> i32 {
    match m {
        Move::Normal {
            promotion: Some(Role::Queen),
            ..
        } => ORDER_PROMOTION,
        Move::Normal {
            promotion: Some(_), ..
        } => ORDER_BAD_CAPTURE,
        Move::Normal { role, from, to, .. } => scorer.score_parts(role, from as usize, to as usize),
        _ => scorer.score(m),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::BENCH_FENS;
    use crate::position::Position as EnginePosition;
    use rand::{Rng, SeedableRng};

    /// Every legal move comes out of the staged picker exactly once, whatever the TT move,
    /// killers and counter-move (legal here, legal elsewhere, or nonsense).
    #[test]
    fn staged_picker_yields_each_legal_move_once() {
        let history = History::default();
        let ctx = Context::default();
        let boards: Vec<Chess> = BENCH_FENS
            .iter()
            .map(|f| EnginePosition::from_fen(f, false).unwrap().board().clone())
            .collect();
        for (i, board) in boards.iter().enumerate() {
            let legal = board.legal_moves();
            let other = boards[(i + 1) % boards.len()].legal_moves();
            let candidates: Vec<Option<Move>> = legal
                .iter()
                .chain(other.iter())
                .copied()
                .map(Some)
                .chain([None])
                .collect();
            for k in 0..candidates.len().min(12) {
                let packed = candidates[k].map_or(PackedMove::NONE, PackedMove::from_move);
                let tt = tt_move(board, packed);
                let killers = [
                    candidates[(k + 3) % candidates.len()],
                    candidates[(k + 7) % candidates.len()],
                ];
                let counter = candidates[(k + 5) % candidates.len()];
                for use_see in [false, true] {
                    let mut picker = MovePicker::new(tt, killers, counter, use_see);
                    let mut seen = Vec::new();
                    while let Some(m) = picker.next_move(board, &history, &ctx) {
                        seen.push(m);
                    }
                    assert_eq!(seen.len(), legal.len(), "{}", BENCH_FENS[i]);
                    for m in legal.iter() {
                        assert_eq!(
                            seen.iter().filter(|&&x| x == *m).count(),
                            1,
                            "{m:?} in {}",
                            BENCH_FENS[i]
                        );
                    }
                }
            }
        }
    }

    /// The scored family returns every move of its list once, the TT move first, and the
    /// quiescence fills replace what an earlier fill left.
    #[test]
    fn scored_family_yields_its_list_once() {
        let history = History::default();
        let ctx = Context::default();
        let mut quiescence = MovePicker::empty();
        assert_eq!(quiescence.next_scored(), None);
        for fen in BENCH_FENS {
            let board = EnginePosition::from_fen(fen, false)
                .unwrap()
                .board()
                .clone();
            let legal = board.legal_moves();
            let tt = legal.last().copied();
            for use_see in [false, true] {
                let mut picker =
                    MovePicker::scored(&board, legal.clone(), tt, [None; 2], &history, use_see);
                let mut seen = Vec::new();
                while let Some(m) = picker.next_move(&board, &history, &ctx) {
                    seen.push(m);
                }
                assert_eq!(seen.first().copied(), tt, "{fen}");
                assert_eq!(seen.len(), legal.len(), "{fen}");
                assert!(legal.iter().all(|m| seen.contains(m)), "{fen}");
            }
            quiescence.fill_evasions(&legal);
            let mut count = 0;
            while quiescence.next_scored().is_some() {
                count += 1;
            }
            assert_eq!(count, legal.len(), "{fen}");
        }
    }

    /// The reference the keyed pick must match move for move: a scan that keeps the first
    /// of equal scores, then swaps the pick into place.
    fn pick_by_scan(moves: &mut MoveList, scores: &mut [i32], next: usize) -> Option<Move> {
        if next >= moves.len() {
            return None;
        }
        let mut best = next;
        for i in next + 1..moves.len() {
            if scores[i] > scores[best] {
                best = i;
            }
        }
        moves.swap(next, best);
        scores.swap(next, best);
        Some(moves[next])
    }

    /// With many ties (scores from a handful of values, as killers, promotions and empty
    /// histories give) and the extremes of the score range, the keyed pick returns the
    /// moves in the order of the scan it replaces.
    #[test]
    fn keyed_pick_matches_a_first_maximum_scan() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(67);
        let all: Vec<Move> = BENCH_FENS
            .iter()
            .flat_map(|f| EnginePosition::from_fen(f, false).unwrap().legal_moves())
            .collect();
        let values = [ORDER_TT_MOVE, ORDER_BAD_CAPTURE, -3, 0, 0, 7, 7, 16_000];
        for round in 0..500 {
            let len = if round % 50 == 0 {
                256
            } else {
                rng.random_range(0..60)
            };
            let mut moves = MoveList::new();
            let mut scores = vec![0; len];
            let mut keys = [0; 256];
            for i in 0..len {
                moves.push(all[(round * 7 + i) % all.len()]);
                scores[i] = values[rng.random_range(0..values.len())];
                keys[i] = order_key(scores[i], i);
            }
            let mut reference = moves.clone();
            for next in 0..=len {
                let expected = pick_by_scan(&mut reference, &mut scores, next);
                assert_eq!(pick_best(&mut moves, &mut keys, next), expected);
            }
        }
    }

    #[test]
    fn unpacks_every_legal_move() {
        for fen in BENCH_FENS {
            let board = EnginePosition::from_fen(fen, false)
                .unwrap()
                .board()
                .clone();
            for m in board.legal_moves() {
                assert_eq!(
                    unpack_move(&board, PackedMove::from_move(m)),
                    Some(m),
                    "{fen}"
                );
            }
        }
    }
}
