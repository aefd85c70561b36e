//! What one search computes as it runs: its counters, the clock and limits it is held
//! to, the frames of the line being searched, the root moves and what is shown of them.
//! Reset at the start of every search; the stack's memory is kept from one to the next.

use std::time::Instant;

use super::frame::Stack;
use super::played::PlayedLines;
use super::root::RootMoves;
use super::{CurrentMove, Stats};
use crate::time::Limiter;

pub struct SearchState {
    pub(super) stats: Stats,
    pub(super) tb_hits: u64,
    /// Whether `on_root_move` is told of root moves yet. The clock is read for it with the
    /// limits, every `CLOCK_CHECK_INTERVAL` nodes: the first move of an iteration can take
    /// half of it, so waiting for the next root move could leave the first second or more
    /// after `CURRMOVE_AFTER` without a line.
    pub(super) announcing: bool,
    /// The iteration under way and the root move it searches.
    pub(super) root_depth: i32,
    pub(super) current_root_move: Option<CurrentMove>,
    /// The lines of the move to play as last shown, for the last `info` lines.
    pub(super) played: PlayedLines,
    /// Every limit the search obeys besides the stop flags.
    pub(super) limits: Limiter,
    /// When the search started (for `info time` and nps).
    pub(super) start: Instant,
    pub(super) nodes: u64,
    /// The nodes the search's other threads had published at this thread's last look
    /// (every `CLOCK_CHECK_INTERVAL` nodes): its limits count them with its own.
    pub(super) others_nodes: u64,
    pub(super) seldepth: usize,
    pub(super) stopped: bool,
    /// The first iteration always completes (it takes microseconds), so there is a move.
    pub(super) in_first_iteration: bool,
    /// Null-move pruning only from this ply on: 0, or past every ply inside the search
    /// that verifies a null-move cutoff (Stockfish lets null moves back in for the
    /// verification's last quarter; here none are, and changing that is a change to test).
    pub(super) null_move_min_ply: usize,
    /// One frame per ply of the line being searched.
    pub(super) stack: Stack,
    /// The moves to search at the root and what this iteration found for them.
    pub(super) root_moves: RootMoves,
    /// MultiPV: the line being searched (0 = best); it searches `root_moves[pv_index..]`.
    pub(super) pv_index: usize,
}

impl SearchState {
    pub(super) fn new() -> SearchState {
        SearchState {
            stats: Stats::default(),
            tb_hits: 0,
            announcing: false,
            root_depth: 0,
            current_root_move: None,
            played: PlayedLines::default(),
            limits: Limiter::default(),
            start: Instant::now(),
            nodes: 0,
            others_nodes: 0,
            seldepth: 0,
            stopped: false,
            in_first_iteration: true,
            null_move_min_ply: 0,
            stack: Stack::default(),
            root_moves: RootMoves::default(),
            pv_index: 0,
        }
    }
}
