//! Correction history: what the search has learnt about how far the static evaluation
//! misjudges positions that share some feature with the current one.
//!
//! Each table holds, per side to move, the errors seen with one kind of key:
//!
//! - pawns: the pawn structure;
//! - material: the piece counts;
//! - non-pawn, one table per colour: where that colour's knights, bishops, rooks, queens
//!   and king stand;
//! - minor: where the knights, bishops and kings of both colours stand;
//! - major: where the rooks, queens and kings of both colours stand;
//! - continuation: the (piece, to-square) pairs of the last two moves (the pieces' colours
//!   say whose turn it is).
//!
//! After a node is searched, the gap between its search score and its corrected static eval
//! is blended into its entry of each table in use, as a weighted average in which old values
//! fade. The static eval of later nodes is shifted by a weighted sum of their entries, so
//! pruning decisions that read the eval (reverse futility, null move, futility, improving)
//! start from a better estimate. As the gap is measured from the corrected eval, each table
//! learns what the others leave uncorrected.
//!
//! The board-keyed tables are indexed by the top bits of Zobrist keys of those pieces,
//! which `Position` keeps move by move (`PieceKeys`), the material table by a hash of the
//! counts. A node's entries are scattered over 1.5 MB, so a parent asks for the cache lines
//! of its child's entries as soon as it has made the move (`prefetch`).

use shakmaty::{Chess, Color, Position};

use super::history::PieceTo;
use super::params::*;
use crate::position::{MaterialCounts, Position as EnginePosition};
use crate::score::*;
use crate::tunable::Param;

/// Which tables are in use: all of them in the search, some in the tests of each table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CorrectionTables {
    pub pawns_and_material: bool,
    pub non_pawn: bool,
    pub minor: bool,
    pub major: bool,
    pub continuation: bool,
}

impl CorrectionTables {
    pub const ALL: CorrectionTables = CorrectionTables {
        pawns_and_material: true,
        non_pawn: true,
        minor: true,
        major: true,
        continuation: true,
    };
}

/// The tables indexed by a key of part of the board.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Keyed {
    Pawns,
    Material,
    WhiteNonPawn,
    BlackNonPawn,
    Minor,
    Major,
}

impl Keyed {
    const ALL: [Keyed; 6] = [
        Keyed::Pawns,
        Keyed::Material,
        Keyed::WhiteNonPawn,
        Keyed::BlackNonPawn,
        Keyed::Minor,
        Keyed::Major,
    ];
}

const KEYED_TABLES: usize = Keyed::ALL.len();

/// What an entry of each keyed table counts for, in 1/CORRECTION_WEIGHT_ONE, by `Keyed as
/// usize`.
static KEYED_WEIGHTS: [&Param; KEYED_TABLES] = [
    &PAWN_CORRECTION_WEIGHT,
    &MATERIAL_CORRECTION_WEIGHT,
    &NON_PAWN_CORRECTION_WEIGHT,
    &NON_PAWN_CORRECTION_WEIGHT,
    &MINOR_CORRECTION_WEIGHT,
    &MAJOR_CORRECTION_WEIGHT,
];
const KEYED_ENTRIES: usize = 1 << CORRECTION_TABLE_BITS;
const CONTINUATION_ENTRIES: usize = PieceTo::COUNT * PieceTo::COUNT;

/// A position's entry in each table in use (`None`: the table is off, or for the
/// continuation table, one of the last two plies was not a move), computed once per node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CorrectionKeys {
    keyed: [Option<u32>; KEYED_TABLES],
    continuation: Option<u32>,
}

#[inline]
fn index_of(key: u64) -> u32 {
    (key >> (64 - CORRECTION_TABLE_BITS)) as u32
}

/// The piece counts (`MaterialCounts`, which `Position` keeps move by move) spread by a
/// multiply, a xor-shift and a multiply so the top bits depend on all of them.
#[inline(always)]
fn material_key(counts: MaterialCounts) -> u64 {
    let h = counts.0.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    (h ^ (h >> 31)).wrapping_mul(0xBF58_476D_1CE4_E5B9)
}

/// The continuation entry: the (piece, to-square) pairs of the last two moves, when both
/// plies were moves (not a null move, not before the first move of the game).
#[inline(always)]
fn continuation_index(pos: &EnginePosition) -> Option<u32> {
    let turn = pos.turn();
    let previous = PieceTo::of(!turn, pos.recent_move(1)?);
    let previous2 = PieceTo::of(turn, pos.recent_move(2)?);
    Some((previous2.index() * PieceTo::COUNT + previous.index()) as u32)
}

impl CorrectionKeys {
    /// Every table's entry for `pos`: the board's keys are kept move by move, so this is a
    /// few shifts and two table lookups of the last moves.
    #[inline(always)]
    pub fn of(pos: &EnginePosition, tables: CorrectionTables) -> CorrectionKeys {
        let pieces = pos.piece_keys();
        let mut keyed = [None; KEYED_TABLES];
        let mut set = |table: Keyed, key: u64| keyed[table as usize] = Some(index_of(key));
        if tables.pawns_and_material {
            set(Keyed::Pawns, pieces.pawns);
            set(Keyed::Material, material_key(pieces.material));
        }
        if tables.non_pawn {
            set(Keyed::WhiteNonPawn, pieces.non_pawn[Color::White as usize]);
            set(Keyed::BlackNonPawn, pieces.non_pawn[Color::Black as usize]);
        }
        if tables.minor {
            set(Keyed::Minor, pieces.minor);
        }
        if tables.major {
            set(Keyed::Major, pieces.major);
        }
        CorrectionKeys {
            keyed,
            continuation: if tables.continuation {
                continuation_index(pos)
            } else {
                None
            },
        }
    }
}

/// [side to move][index]
type KeyedTable = [[i16; KEYED_ENTRIES]; 2];

/// One search thread's tables: 6 * 64 KB keyed by the board and 1.1 MB keyed by the last
/// two moves.
pub struct CorrectionHistory {
    /// [`Keyed` as usize][side to move][index]
    keyed: Box<[KeyedTable; KEYED_TABLES]>,
    /// [piece-to two plies back * PieceTo::COUNT + piece-to one ply back]
    continuation: Box<[i16]>,
}

impl Default for CorrectionHistory {
    fn default() -> Self {
        CorrectionHistory {
            // Built on the heap (zeroed pages), without a temporary on the stack.
            keyed: vec![[[0i16; KEYED_ENTRIES]; 2]; KEYED_TABLES]
                .into_boxed_slice()
                .try_into()
                .expect("one table per kind of key"),
            continuation: vec![0i16; CONTINUATION_ENTRIES].into_boxed_slice(),
        }
    }
}

impl CorrectionHistory {
    pub fn clear(&mut self) {
        *self = CorrectionHistory::default();
    }

    /// What the tables learnt about the position of `keys` (cp, side to move's view): the
    /// weighted sum of its entries, to be added to its raw static eval with `corrected`.
    #[inline]
    pub fn correction(&self, turn: Color, keys: &CorrectionKeys) -> i32 {
        let side = turn as usize;
        let mut sum = 0;
        for (table, index) in keys.keyed.into_iter().enumerate() {
            if let Some(index) = index {
                let entry = self.keyed[table][side][index as usize];
                sum += KEYED_WEIGHTS[table].get() * i32::from(entry);
            }
        }
        if let Some(index) = keys.continuation {
            let entry = self.continuation[index as usize];
            sum += CONTINUATION_CORRECTION_WEIGHT.get() * i32::from(entry);
        }
        sum / (CORRECTION_WEIGHT_ONE * CORRECTION_GRAIN)
    }

    /// Asks the CPU to start loading the entries of `keys`, which a node about to be
    /// searched will read.
    #[inline]
    pub fn prefetch(&self, turn: Color, keys: &CorrectionKeys) {
        let side = turn as usize;
        for (table, index) in keys.keyed.into_iter().enumerate() {
            if let Some(index) = index {
                prefetch(&self.keyed[table][side][index as usize]);
            }
        }
        if let Some(index) = keys.continuation {
            prefetch(&self.continuation[index as usize]);
        }
    }

    /// Blends `gap` = search score - corrected eval into every entry of `keys`: each becomes
    /// a weighted average of its old value and the gap, the gap weighing more for deeper
    /// (more trustworthy) searches, so what an entry learnt long ago fades.
    #[inline]
    pub fn update(&mut self, turn: Color, keys: &CorrectionKeys, depth: i32, gap: i32) {
        let side = turn as usize;
        let weight = (depth + 1).clamp(1, CORRECTION_MAX_WEIGHT);
        let target = gap.clamp(-CORRECTION_MAX_GAP, CORRECTION_MAX_GAP) * CORRECTION_GRAIN;
        let blend = |entry: &mut i16| {
            let old = i32::from(*entry);
            let new = (old * (CORRECTION_WEIGHT_SCALE - weight) + target * weight)
                / CORRECTION_WEIGHT_SCALE;
            *entry = new.clamp(-CORRECTION_LIMIT, CORRECTION_LIMIT) as i16;
        };
        for (table, index) in keys.keyed.into_iter().enumerate() {
            if let Some(index) = index {
                blend(&mut self.keyed[table][side][index as usize]);
            }
        }
        if let Some(index) = keys.continuation {
            blend(&mut self.continuation[index as usize]);
        }
    }
}

/// Asks the CPU to start loading the cache line that holds `entry`.
#[inline]
fn prefetch(entry: &i16) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        // SAFETY: a prefetch is only a hint to the cache: it never faults, reads nothing
        // into the program and writes nothing, whatever the address (and this one comes from
        // a reference). SSE, its target feature, is part of the x86_64 baseline.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(std::ptr::from_ref(entry).cast::<i8>()) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = entry;
}

/// The static eval `raw` (side to move's view) shifted by `correction`. Never turns an
/// ordinary eval into a mate or tablebase score.
#[inline]
pub fn corrected(raw: i32, correction: i32) -> i32 {
    (raw + correction).clamp(-TB_WIN_BOUND + 1, TB_WIN_BOUND - 1)
}

/// Whether a finished node's result says something about its static eval: not in check,
/// decided by a quiet move (a capture's gain is not the eval's error), no mate or
/// tablebase score, and a bound that points away from the eval (a fail-high below the eval
/// or a fail-low above it says nothing about how wrong the eval is).
#[inline]
pub fn worth_learning(
    pos: &Chess,
    best_move: Option<shakmaty::Move>,
    best_score: i32,
    static_eval: i32,
    failed_high: bool,
    failed_low: bool,
) -> bool {
    !pos.is_check()
        && best_move.is_none_or(|m| !m.is_capture() && m.promotion().is_none())
        && best_score.abs() < TB_WIN_BOUND
        && !(failed_high && best_score <= static_eval)
        && !(failed_low && best_score >= static_eval)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::StdRng;
    use rand::{Rng, SeedableRng};
    use shakmaty::Role;
    use std::collections::{HashMap, HashSet};

    const ALL_TABLES: CorrectionTables = CorrectionTables::ALL;

    fn position(fen: &str) -> EnginePosition {
        EnginePosition::from_fen(fen, false).unwrap()
    }

    fn board(fen: &str) -> Chess {
        position(fen).board().clone()
    }

    fn keys(fen: &str) -> CorrectionKeys {
        CorrectionKeys::of(&position(fen), ALL_TABLES)
    }

    impl CorrectionHistory {
        /// The corrected static eval, as the search computes it.
        fn corrected(&self, turn: Color, keys: &CorrectionKeys, raw: i32) -> i32 {
            corrected(raw, self.correction(turn, keys))
        }
    }

    /// Searches that keep finding `score` where the raw eval says `raw`.
    fn learn(history: &mut CorrectionHistory, keys: &CorrectionKeys, raw: i32, score: i32) {
        for _ in 0..300 {
            let gap = score - history.corrected(Color::White, keys, raw);
            history.update(Color::White, keys, 12, gap);
        }
    }

    #[test]
    fn learns_toward_the_search_score_fades_and_stays_bounded() {
        let mut pos = position("4k3/pp6/8/8/8/8/PPP5/4K3 w - - 0 1");
        pos.play_uci_moves(["e1d1", "e8d8"]).unwrap();
        let keys = CorrectionKeys::of(&pos, ALL_TABLES);
        assert!(keys.keyed.iter().all(Option::is_some) && keys.continuation.is_some());
        let mut history = CorrectionHistory::default();
        assert_eq!(history.corrected(Color::White, &keys, 50), 50);
        learn(&mut history, &keys, 0, 120);
        // Every table learns the part of the error the others leave: together they
        // correct most of it, never more.
        let learnt = history.corrected(Color::White, &keys, 0);
        assert!((80..=120).contains(&learnt), "{learnt}");
        // The other side to move has its own entries (the continuation entry, keyed by
        // the colours of the moves, belongs to White here).
        let mut black = keys;
        black.continuation = None;
        assert_eq!(history.corrected(Color::Black, &black, 0), 0);
        // What was learnt fades once the searches say otherwise.
        learn(&mut history, &keys, 0, 0);
        assert!(history.corrected(Color::White, &keys, 0).abs() <= 2);
        // Each entry stays within its limit, and the sum never makes a mate score.
        learn(&mut history, &keys, -2000, 2000);
        for table in history.keyed.iter() {
            assert!(table
                .iter()
                .flatten()
                .all(|e| i32::from(*e).abs() <= CORRECTION_LIMIT));
        }
        assert!(history.corrected(Color::White, &keys, TB_WIN_BOUND + 50) < TB_WIN_BOUND);
        history.clear();
        assert_eq!(history.corrected(Color::White, &keys, 0), 0);
    }

    /// A prefetch is a hint: after prefetching every entry of many positions, the tables
    /// hold exactly what they did.
    #[test]
    fn prefetch_changes_nothing() {
        let mut pos = position("r3k1n1/pp6/8/8/8/8/PPP5/R3KB2 w - - 0 1");
        let mut history = CorrectionHistory::default();
        let keys = CorrectionKeys::of(&pos, ALL_TABLES);
        learn(&mut history, &keys, 0, 50);
        let before = history.corrected(Color::White, &keys, 0);
        for m in pos.legal_moves() {
            pos.make_move(m);
            for turn in Color::ALL {
                history.prefetch(turn, &CorrectionKeys::of(&pos, ALL_TABLES));
            }
            pos.unmake_move();
        }
        history.prefetch(Color::White, &keys);
        assert_eq!(history.corrected(Color::White, &keys, 0), before);
        let untouched = CorrectionHistory::default();
        assert!(history.keyed[..] != untouched.keyed[..]);
        let sum: i64 = history
            .keyed
            .iter()
            .flatten()
            .flatten()
            .map(|&e| i64::from(e))
            .sum();
        let learnt: i64 = Keyed::ALL
            .into_iter()
            .zip(keys.keyed)
            .map(|(t, i)| {
                i64::from(history.keyed[t as usize][Color::White as usize][i.unwrap() as usize])
            })
            .sum();
        assert_eq!(sum, learnt);
    }

    #[test]
    fn tables_switched_off_neither_correct_nor_learn() {
        let pos = position("4k3/pp6/8/8/8/8/PPP5/4K3 w - - 0 1");
        let pawns_only = CorrectionTables {
            pawns_and_material: true,
            non_pawn: false,
            minor: false,
            major: false,
            continuation: false,
        };
        let keys = CorrectionKeys::of(&pos, pawns_only);
        assert_eq!(keys.keyed.iter().filter(|k| k.is_some()).count(), 2);
        let mut history = CorrectionHistory::default();
        learn(&mut history, &keys, 0, 100);
        let all = CorrectionKeys::of(&pos, ALL_TABLES);
        let mut others = all;
        others.keyed[Keyed::Pawns as usize] = None;
        others.keyed[Keyed::Material as usize] = None;
        assert_eq!(history.corrected(Color::White, &others, 0), 0);
        assert!(history.corrected(Color::White, &all, 0) > 0);
        let off = CorrectionTables {
            pawns_and_material: false,
            ..pawns_only
        };
        assert_eq!(
            history.corrected(Color::White, &CorrectionKeys::of(&pos, off), 7),
            7
        );
    }

    #[test]
    fn keys_follow_the_pieces_they_are_made_of() {
        let base = keys("r3k1n1/pp6/8/8/8/8/PPP5/R3KB2 w - - 0 1");
        let changed = |fen: &str| -> Vec<Keyed> {
            let other = keys(fen);
            Keyed::ALL
                .into_iter()
                .filter(|&t| base.keyed[t as usize] != other.keyed[t as usize])
                .collect()
        };
        use Keyed::*;
        // A pawn move: the pawn table only.
        assert_eq!(changed("r3k1n1/p7/1p6/8/8/8/PPP5/R3KB2 w - - 0 1"), [Pawns]);
        // A white bishop move: White's non-pawn and the minor-piece tables.
        assert_eq!(
            changed("r3k1n1/pp6/8/8/8/8/PPP1B3/R3K3 w - - 0 1"),
            [WhiteNonPawn, Minor]
        );
        // A black rook move: Black's non-pawn and the major-piece tables.
        assert_eq!(
            changed("3rk1n1/pp6/8/8/8/8/PPP5/R3KB2 w - - 0 1"),
            [BlackNonPawn, Major]
        );
        // A king move: the king belongs to the minor and the major pieces.
        assert_eq!(
            changed("r2k2n1/pp6/8/8/8/8/PPP5/R3KB2 w - - 0 1"),
            [BlackNonPawn, Minor, Major]
        );
        // A capture of a knight: the material too.
        assert_eq!(
            changed("r3k3/pp6/8/8/8/8/PPP5/R3KB2 w - - 0 1"),
            [Material, BlackNonPawn, Minor]
        );
        // The same pieces of the other colour make another key.
        let white = keys("4k3/8/8/8/8/8/8/3NK3 w - - 0 1");
        let black = keys("3nk3/8/8/8/8/8/8/4K3 w - - 0 1");
        assert_ne!(white.keyed[Minor as usize], black.keyed[Minor as usize]);
    }

    #[test]
    fn continuation_key_is_the_last_two_moves() {
        let continuation = |pos: &EnginePosition| CorrectionKeys::of(pos, ALL_TABLES).continuation;
        let mut pos = EnginePosition::default();
        assert_eq!(continuation(&pos), None);
        pos.play_uci_moves(["e2e4"]).unwrap();
        assert_eq!(continuation(&pos), None);
        pos.play_uci_moves(["e7e5"]).unwrap();
        assert!(continuation(&pos).is_some());
        // Another road to the same board: the same board entries, another continuation
        // entry.
        let mut detour = EnginePosition::default();
        detour
            .play_uci_moves(["e2e4", "e7e5", "g1f3", "g8f6", "f3g1", "f6g8"])
            .unwrap();
        let (a, b) = (
            CorrectionKeys::of(&pos, ALL_TABLES),
            CorrectionKeys::of(&detour, ALL_TABLES),
        );
        assert_eq!(a.keyed, b.keyed);
        assert!(b.continuation.is_some());
        assert_ne!(a.continuation, b.continuation);
        // No entry across a null move, nor right after one.
        assert!(pos.make_null_move());
        assert_eq!(continuation(&pos), None);
        pos.play_uci_moves(["d7d6"]).unwrap();
        assert_eq!(continuation(&pos), None);
        pos.play_uci_moves(["d2d3"]).unwrap();
        assert!(continuation(&pos).is_some());
    }

    /// Distinct placements of White's pieces met along random games spread over the table
    /// about as a uniform hash would spread them.
    #[test]
    fn keys_spread_over_the_table() {
        let mut rng = StdRng::seed_from_u64(46);
        let mut seen: HashMap<[u64; 5], u32> = HashMap::new();
        for _ in 0..60 {
            let mut pos = EnginePosition::default();
            for _ in 0..80 {
                let moves = pos.legal_moves();
                if moves.is_empty() {
                    break;
                }
                pos.make_move(moves[rng.random_range(0..moves.len())]);
                let board = pos.board().board();
                let placement = [
                    Role::Knight,
                    Role::Bishop,
                    Role::Rook,
                    Role::Queen,
                    Role::King,
                ]
                .map(|role| (board.by_color(Color::White) & board.by_role(role)).0);
                let key = pos.piece_keys().non_pawn[Color::White as usize];
                seen.insert(placement, index_of(key));
            }
        }
        let n = seen.len() as f64;
        assert!(n > 1000.0, "{n}");
        let buckets = KEYED_ENTRIES as f64;
        let distinct: HashSet<u32> = seen.values().copied().collect();
        // n keys drawn uniformly fill buckets * (1 - (1 - 1/buckets)^n) buckets.
        let expected = n - buckets * (1.0 - (1.0 - 1.0 / buckets).powf(n));
        let collisions = n - distinct.len() as f64;
        assert!(
            collisions <= 2.0 * expected + 10.0,
            "{collisions} vs {expected}"
        );
    }

    #[test]
    fn learns_only_from_informative_results() {
        let quiet = board("4k3/pp6/8/8/8/8/PPP5/4K3 w - - 0 1");
        let check = board("4k3/pp6/8/8/8/8/PPP5/r3K3 w - - 0 1");
        assert!(worth_learning(&quiet, None, 40, 10, false, false));
        assert!(!worth_learning(&check, None, 40, 10, false, false));
        assert!(!worth_learning(&quiet, None, 5, 10, true, false));
        assert!(worth_learning(&quiet, None, 40, 10, true, false));
        assert!(!worth_learning(&quiet, None, 40, 10, false, true));
        assert!(!worth_learning(&quiet, None, MATE - 3, 10, false, false));
        let exchange = board("4k3/8/8/3p4/4P3/8/8/4K3 w - - 0 1");
        let capture = exchange.legal_moves().into_iter().find(|m| m.is_capture());
        assert!(!worth_learning(&exchange, capture, 40, 10, false, false));
        let push = exchange
            .legal_moves()
            .into_iter()
            .find(|m| m.role() == Role::Pawn && !m.is_capture());
        assert!(worth_learning(&exchange, push, 40, 10, false, false));
    }

    /// The material key packs each colour's count of each piece kind (kings left out)
    /// four bits each, roles in shakmaty's order, white before black: the counts and
    /// their order decide the key, so the hashed value must not change with the code. The
    /// counts are kept move by move (captures, promotions, en passant): at every ply of
    /// random games they must equal the board's.
    #[test]
    fn material_key_packs_counts_in_role_then_colour_order() {
        let mut rng = StdRng::seed_from_u64(5);
        for fen in [
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
            "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
            "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
            "4k3/8/8/8/8/8/8/QQQQK3 b - - 0 1",
            "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
            "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3",
        ] {
            let mut pos = position(fen);
            for _ in 0..40 {
                let board = pos.board().board();
                let mut counts = 0u64;
                for role in [
                    Role::Pawn,
                    Role::Knight,
                    Role::Bishop,
                    Role::Rook,
                    Role::Queen,
                ] {
                    for color in Color::ALL {
                        let n = (board.by_role(role) & board.by_color(color)).count() as u64;
                        counts = counts << 4 | n.min(15);
                    }
                }
                let h = counts.wrapping_mul(0x9E37_79B9_7F4A_7C15);
                let expected = (h ^ (h >> 31)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
                assert_eq!(material_key(pos.piece_keys().material), expected, "{fen}");
                let moves = pos.legal_moves();
                if moves.is_empty() {
                    break;
                }
                pos.make_move(moves[rng.random_range(0..moves.len())]);
            }
        }
    }
}
