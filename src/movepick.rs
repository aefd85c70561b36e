//! Move ordering: every legal move gets a score once, then moves are picked best-first one
//! at a time, so a cutoff on the first move does not pay for sorting the rest.

use shakmaty::{Chess, Move, MoveList, Role};

use crate::search::history::History;
use crate::search::params::*;
use crate::see::see_at_least;
use crate::tt::PackedMove;

/// Value of a role for MVV-LVA ordering.
fn victim_value(role: Role) -> i32 {
    match role {
        Role::Pawn => 100,
        Role::Knight => 320,
        Role::Bishop => 330,
        Role::Rook => 500,
        Role::Queen => 900,
        Role::King => 10_000,
    }
}

/// MVV-LVA: most valuable victim first, least valuable attacker among equals.
#[inline]
pub fn mvv_lva(m: Move) -> i32 {
    let victim = match m {
        Move::EnPassant { .. } => Role::Pawn,
        _ => m.capture().unwrap_or(Role::Pawn),
    };
    victim_value(victim) * 16 - victim_value(m.role()) / 16
}

pub struct MovePicker {
    moves: MoveList,
    scores: [i32; 256],
    next: usize,
}

impl MovePicker {
    /// Orders all legal moves of a main-search node.
    /// With `use_see`, captures that lose material by exchange go after the quiet moves.
    pub fn new(
        board: &Chess,
        moves: MoveList,
        tt_move: PackedMove,
        killers: [Option<Move>; 2],
        history: &History,
        use_see: bool,
    ) -> MovePicker {
        let turn = shakmaty::Position::turn(board);
        let mut scores = [0; 256];
        for (i, &m) in moves.iter().enumerate() {
            scores[i] = if !tt_move.is_none() && PackedMove::from_move(m) == tt_move {
                ORDER_TT_MOVE
            } else if m.is_capture() {
                if !use_see || see_at_least(board, m, 0) {
                    ORDER_CAPTURE + mvv_lva(m)
                } else {
                    ORDER_BAD_CAPTURE + mvv_lva(m)
                }
            } else if m.promotion().is_some() {
                ORDER_PROMOTION + victim_value(m.promotion().unwrap_or(Role::Pawn))
            } else if Some(m) == killers[0] {
                ORDER_KILLER_1
            } else if Some(m) == killers[1] {
                ORDER_KILLER_2
            } else {
                history.quiet_score(turn, m)
            };
        }
        MovePicker {
            moves,
            scores,
            next: 0,
        }
    }

    /// Orders captures (and promotions) for quiescence search by MVV-LVA.
    pub fn new_qsearch(moves: MoveList) -> MovePicker {
        let mut scores = [0; 256];
        for (i, &m) in moves.iter().enumerate() {
            scores[i] = mvv_lva(m) + m.promotion().map_or(0, victim_value);
        }
        MovePicker {
            moves,
            scores,
            next: 0,
        }
    }

    pub fn len(&self) -> usize {
        self.moves.len()
    }

    pub fn is_empty(&self) -> bool {
        self.moves.is_empty()
    }

    /// The best remaining move (selection step of a selection sort).
    #[inline]
    pub fn next_move(&mut self) -> Option<Move> {
        if self.next >= self.moves.len() {
            return None;
        }
        let mut best = self.next;
        for i in self.next + 1..self.moves.len() {
            if self.scores[i] > self.scores[best] {
                best = i;
            }
        }
        self.moves.swap(self.next, best);
        self.scores.swap(self.next, best);
        self.next += 1;
        Some(self.moves[self.next - 1])
    }
}
