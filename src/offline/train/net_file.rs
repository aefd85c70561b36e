//! The net files of a training run: the quantized net the engine reads, written after
//! every epoch (quantized by `nnue::FloatNetwork::quantize`, laid out by the engine's own
//! writer, so the trainer and the engine cannot disagree on the format), and a net read
//! back as the float network it stands for (`--init`).

use std::fs;
use std::io;
use std::path::Path;

use crate::nnue::{FloatNetwork, Network};

/// Reads a net file for `--init` (checked before it is read, as the engine's `EvalFile`):
/// the float network its integers stand for, which quantizes to the same file again.
pub fn read(path: &Path) -> Result<FloatNetwork, String> {
    let net = Network::read_file(path).map_err(|e| format!("--init {}: {e}", path.display()))?;
    Ok(net.dequantize())
}

/// Writes the quantized net to `path` through a temporary file and a rename, so that a
/// reader (or a run killed mid-write) never sees half a net.
///
/// # Panics
///
/// When the network breaks the format's bounds (a hidden size or bucket count it does not
/// allow), which `run` checks first.
pub fn write(path: &Path, net: &FloatNetwork) -> io::Result<()> {
    write_atomically(path, &net.quantize().to_bytes())
}

pub(super) fn write_atomically(path: &Path, bytes: &[u8]) -> io::Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        fs::create_dir_all(dir)?;
    }
    let mut temporary = path.as_os_str().to_owned();
    temporary.push(".tmp");
    fs::write(&temporary, bytes)?;
    fs::rename(&temporary, path)
}
