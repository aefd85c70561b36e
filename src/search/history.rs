//! Move-ordering memory of one search thread: counter-moves, butterfly history,
//! continuation history (by the moves one and two plies back) and capture history. (The
//! killers belong to the plies of one search: they are in its stack, search/frame.rs.)
//!
//! Every history value is kept in `-HISTORY_MAX..=HISTORY_MAX` by a gravity update: the
//! closer a value is to the bound, the less a bonus moves it, so recent results outweigh old
//! ones without any periodic rescaling.

use shakmaty::{Color, Move, Role};

use super::params::{
    HISTORY_BONUS_MAX, HISTORY_BONUS_PER_DEPTH, HISTORY_BONUS_PER_DEPTH_SQUARED, HISTORY_MAX,
};

/// A moved piece and its destination: the key continuation history and counter-moves use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PieceTo {
    piece: usize,
    to: usize,
}

impl PieceTo {
    /// How many (piece, square) pairs there are: the range of `index`.
    pub const COUNT: usize = 12 * 64;

    #[inline]
    pub fn index(self) -> usize {
        self.piece * 64 + self.to
    }

    pub fn of(color: Color, m: Move) -> PieceTo {
        let piece = (m.role() as usize - 1) + 6 * usize::from(color == Color::Black);
        PieceTo {
            piece,
            to: m.to() as usize,
        }
    }
}

/// The moves that led to the node, for continuation history: one and two plies back.
#[derive(Clone, Copy, Debug, Default)]
pub struct Context {
    pub previous: Option<PieceTo>,
    pub previous2: Option<PieceTo>,
}

/// [previous piece * 64 + previous to][piece][to]
type ContinuationTable = [[[i16; 64]; 12]; 12 * 64];

pub struct History {
    /// [colour][from][to]
    butterfly: Box<[[[i16; 64]; 64]; 2]>,
    continuation: Box<ContinuationTable>,
    /// [piece][to][victim role]
    capture: Box<[[[i16; 6]; 64]; 12]>,
    /// [previous piece][previous to]
    counter: Box<[[Option<Move>; 64]; 12]>,
}

/// The quiet-move history of one node (see `History::quiet_scorer`).
pub struct QuietScorer<'a> {
    butterfly: &'a [[i16; 64]; 64],
    /// The continuation rows of the moves one and two plies back; `NO_CONTINUATION` where
    /// there was no move, so every score is the same three loads and no branch.
    previous: &'a [[i16; 64]; 12],
    previous2: &'a [[i16; 64]; 12],
    /// The first piece index of the side to move (`PieceTo`'s numbering).
    piece_base: usize,
}

/// The continuation row of a ply that was not a move: it adds nothing.
static NO_CONTINUATION: [[i16; 64]; 12] = [[0; 64]; 12];

impl QuietScorer<'_> {
    /// Butterfly plus both continuation histories of `m` (see `History::quiet_score`).
    #[inline]
    pub fn score(&self, m: Move) -> i32 {
        let (from, to) = from_to(m);
        self.score_parts(m.role(), from, to)
    }

    /// `score` of a move of `role` from `from` to `to`, for a caller that has taken the
    /// move apart already.
    #[inline(always)]
    pub fn score_parts(&self, role: Role, from: usize, to: usize) -> i32 {
        let piece = self.piece_base + (role as usize - 1);
        i32::from(self.butterfly[from][to])
            + i32::from(self.previous[piece][to])
            + i32::from(self.previous2[piece][to])
    }
}

/// A continuation table on the heap, built without a 1 MB temporary on the stack.
fn continuation_table() -> Box<ContinuationTable> {
    vec![[[0i16; 64]; 12]; 12 * 64]
        .into_boxed_slice()
        .try_into()
        .expect("length is 12 * 64")
}

impl Default for History {
    fn default() -> Self {
        History {
            butterfly: Box::new([[[0; 64]; 64]; 2]),
            continuation: continuation_table(),
            capture: Box::new([[[0; 6]; 64]; 12]),
            counter: Box::new([[None; 64]; 12]),
        }
    }
}

#[inline]
fn from_to(m: Move) -> (usize, usize) {
    (m.from().map_or(0, |s| s as usize), m.to() as usize)
}

#[inline]
fn victim(m: Move) -> usize {
    m.capture().map_or(0, |r| r as usize - 1)
}

#[inline]
fn gravity(v: &mut i16, bonus: i32) {
    let old = i32::from(*v);
    let new = old + bonus - old * bonus.abs() / HISTORY_MAX;
    *v = new.clamp(-HISTORY_MAX, HISTORY_MAX) as i16;
}

/// History bonus for a cutoff at `depth`.
#[inline]
pub fn bonus(depth: i32) -> i32 {
    (HISTORY_BONUS_PER_DEPTH_SQUARED * depth * depth + HISTORY_BONUS_PER_DEPTH * depth)
        .min(HISTORY_BONUS_MAX)
}

impl History {
    pub fn clear(&mut self) {
        *self = History::default();
    }

    /// Ordering score of a quiet move: butterfly plus both continuation histories.
    #[inline]
    pub fn quiet_score(&self, color: Color, m: Move, ctx: &Context) -> i32 {
        self.quiet_scorer(color, ctx).score(m)
    }

    /// `quiet_score` for many moves of one node: the tables' rows for this side and context
    /// are looked up once.
    #[inline]
    pub fn quiet_scorer(&self, color: Color, ctx: &Context) -> QuietScorer<'_> {
        let row =
            |p: Option<PieceTo>| p.map_or(&NO_CONTINUATION, |p| &self.continuation[p.index()]);
        QuietScorer {
            butterfly: &self.butterfly[color as usize],
            previous: row(ctx.previous),
            previous2: row(ctx.previous2),
            piece_base: 6 * usize::from(color == Color::Black),
        }
    }

    #[inline]
    pub fn capture_score(&self, color: Color, m: Move) -> i32 {
        let pt = PieceTo::of(color, m);
        i32::from(self.capture[pt.piece][pt.to][victim(m)])
    }

    #[inline]
    pub fn counter_move(&self, ctx: &Context) -> Option<Move> {
        ctx.previous.and_then(|p| self.counter[p.piece][p.to])
    }

    /// A quiet move caused a cutoff: reward it, punish the quiets tried before it, and
    /// remember it as the counter-move.
    pub fn update_quiet_cutoff(
        &mut self,
        color: Color,
        depth: i32,
        best: Move,
        tried: &[Move],
        ctx: &Context,
    ) {
        let b = bonus(depth);
        self.update_quiet(color, best, b, ctx);
        for &m in tried {
            if m != best {
                self.update_quiet(color, m, -b, ctx);
            }
        }
        if let Some(p) = ctx.previous {
            self.counter[p.piece][p.to] = Some(best);
        }
    }

    /// A capture caused a cutoff: reward it and punish the captures tried before it.
    pub fn update_capture_cutoff(&mut self, color: Color, depth: i32, best: Move, tried: &[Move]) {
        let b = bonus(depth);
        self.update_capture(color, best, b);
        for &m in tried {
            if m != best {
                self.update_capture(color, m, -b);
            }
        }
    }

    fn update_quiet(&mut self, color: Color, m: Move, bonus: i32, ctx: &Context) {
        let (from, to) = from_to(m);
        gravity(&mut self.butterfly[color as usize][from][to], bonus);
        self.update_continuation(color, m, bonus, ctx);
    }

    /// Moves the continuation histories of the quiet move `m` (not its butterfly entry) by
    /// `bonus`: what the full-depth re-search after a reduced one learnt about the move in
    /// this context.
    pub fn update_continuation(&mut self, color: Color, m: Move, bonus: i32, ctx: &Context) {
        let pt = PieceTo::of(color, m);
        if let Some(p) = ctx.previous {
            gravity(&mut self.continuation[p.index()][pt.piece][pt.to], bonus);
        }
        if let Some(p) = ctx.previous2 {
            gravity(&mut self.continuation[p.index()][pt.piece][pt.to], bonus);
        }
    }

    fn update_capture(&mut self, color: Color, m: Move, bonus: i32) {
        let pt = PieceTo::of(color, m);
        gravity(&mut self.capture[pt.piece][pt.to][victim(m)], bonus);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::Square;

    fn quiet(from: Square, to: Square) -> Move {
        Move::Normal {
            role: Role::Knight,
            from,
            capture: None,
            to,
            promotion: None,
        }
    }

    #[test]
    fn tables_start_empty_and_stay_bounded() {
        let mut h = History::default();
        let m = quiet(Square::G1, Square::F3);
        let ctx = Context::default();
        assert_eq!(h.quiet_score(Color::White, m, &ctx), 0);
        for _ in 0..10_000 {
            h.update_quiet_cutoff(Color::White, 20, m, &[], &ctx);
        }
        let s = h.quiet_score(Color::White, m, &ctx);
        assert!(s > 0 && s <= HISTORY_MAX, "{s}");
    }

    #[test]
    fn continuation_and_counter_use_previous_move() {
        let mut h = History::default();
        let prev = quiet(Square::B8, Square::C6);
        let ctx = Context {
            previous: Some(PieceTo::of(Color::Black, prev)),
            previous2: None,
        };
        let m = quiet(Square::G1, Square::F3);
        h.update_quiet_cutoff(Color::White, 8, m, &[], &ctx);
        assert_eq!(h.counter_move(&ctx), Some(m));
        assert!(
            h.quiet_score(Color::White, m, &ctx)
                > h.quiet_score(Color::White, m, &Context::default())
        );
    }

    /// The update after an LMR re-search moves the continuation tables of the context only:
    /// without a previous move the score (butterfly alone) stays as it was.
    #[test]
    fn continuation_update_leaves_the_butterfly_table_alone() {
        let mut h = History::default();
        let ctx = Context {
            previous: Some(PieceTo::of(Color::Black, quiet(Square::B8, Square::C6))),
            previous2: Some(PieceTo::of(Color::White, quiet(Square::B1, Square::C3))),
        };
        let m = quiet(Square::G1, Square::F3);
        h.update_continuation(Color::White, m, bonus(6), &ctx);
        assert_eq!(h.quiet_score(Color::White, m, &ctx), 2 * bonus(6));
        assert_eq!(h.quiet_score(Color::White, m, &Context::default()), 0);
        h.update_continuation(Color::White, m, -bonus(6), &ctx);
        assert!(h.quiet_score(Color::White, m, &ctx) < 2 * bonus(6));
        assert_eq!(h.quiet_score(Color::White, m, &Context::default()), 0);
    }

    #[test]
    fn node_scorer_equals_quiet_score() {
        use shakmaty::{Chess, Position};
        let mut h = History::default();
        let board = Chess::default();
        let moves: Vec<Move> = board.legal_moves().into_iter().collect();
        let contexts = [
            Context::default(),
            Context {
                previous: Some(PieceTo::of(Color::Black, quiet(Square::B8, Square::C6))),
                previous2: None,
            },
            Context {
                previous: Some(PieceTo::of(Color::Black, quiet(Square::G8, Square::F6))),
                previous2: Some(PieceTo::of(Color::White, quiet(Square::B1, Square::C3))),
            },
        ];
        // Cutoffs of different moves in different contexts fill all three tables.
        for (k, &m) in moves.iter().enumerate() {
            let ctx = &contexts[k % contexts.len()];
            let tried = &moves[..k.min(3)];
            h.update_quiet_cutoff(Color::White, 1 + k as i32 % 7, m, tried, ctx);
        }
        for ctx in &contexts {
            let scorer = h.quiet_scorer(Color::White, ctx);
            for &m in &moves {
                assert_eq!(
                    scorer.score(m),
                    h.quiet_score(Color::White, m, ctx),
                    "{m:?}"
                );
            }
        }
        assert!(moves
            .iter()
            .any(|&m| h.quiet_score(Color::White, m, &contexts[2]) != 0));
    }
}
