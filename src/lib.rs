//! Basalt: a UCI chess engine on the shakmaty move generator.

pub mod bench;
pub mod eval;
pub mod movegen;
pub mod nnue;
pub mod offline;
pub mod perft;
pub mod position;
pub mod score;
pub mod search;
pub mod see;
pub mod syzygy;
pub mod threads;
pub mod time;
pub mod tt;
pub mod tunable;
pub mod uci;
