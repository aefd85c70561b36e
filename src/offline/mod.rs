//! The offline tools: self-play data (`datagen`), the NNUE trainer (`train`) and the Texel
//! tuner of the hand-crafted evaluation (`texel`, behind `basalt tune`). They use the
//! engine's modules; no engine module uses them.

pub mod cli;
pub mod datagen;
pub mod texel;
pub mod train;
