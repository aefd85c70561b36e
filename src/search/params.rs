//! Every search constant in one place, with its unit.

/// Deepest ply the search stack holds (iterative deepening stops well before it).
pub const MAX_PLY: usize = 128;
/// Deepest iterative-deepening iteration.
pub const MAX_DEPTH: i32 = 100;

/// Scores are centipawns; a mate in `n` plies scores `MATE - n`.
pub const MATE: i32 = 32_000;
/// Scores beyond this magnitude are mate scores.
pub const MATE_BOUND: i32 = MATE - MAX_PLY as i32;
pub const INFINITY: i32 = MATE + 1;
pub const DRAW: i32 = 0;

/// Aspiration windows start at this depth, this wide (cp), and grow by this factor on a miss.
pub const ASPIRATION_MIN_DEPTH: i32 = 4;
pub const ASPIRATION_INITIAL_WINDOW: i32 = 25;
pub const ASPIRATION_GROWTH: i32 = 2;

/// How often (in nodes) the clock is read; the stop flag is read at every node.
pub const CLOCK_CHECK_INTERVAL: u64 = 1024;

/// Move ordering scores (higher is searched first).
pub const ORDER_TT_MOVE: i32 = 4_000_000;
pub const ORDER_CAPTURE: i32 = 2_000_000;
pub const ORDER_PROMOTION: i32 = 1_900_000;
pub const ORDER_KILLER_1: i32 = 1_800_000;
pub const ORDER_KILLER_2: i32 = 1_799_000;

/// History table values stay within +-HISTORY_MAX (the gravity term keeps them there).
pub const HISTORY_MAX: i32 = 16_384;

/// Do not start another iteration once this share (numerator, denominator) of the soft
/// time limit has passed.
pub const SOFT_LIMIT_NEXT_ITERATION: (u32, u32) = (6, 10);
