//! The offline tools: self-play data (`datagen`), the NNUE trainer (`train`), the Texel
//! tuner of the hand-crafted evaluation (`texel`, behind `basalt tune`) and what OpenBench
//! asks of an engine (`openbench`: `genfens`, SPSA input). They use the engine's modules; no
//! engine module uses them.

pub mod cli;
pub mod datagen;
pub mod openbench;
pub mod texel;
pub mod train;
