//! Chooses the net the binary embeds: `nets/basalt.nnue`, or the file `BASALT_EVALFILE`
//! names (`make EVALFILE=<path>` sets it: OpenBench hands a network to a build that way). The
//! chosen file's absolute path reaches `src/nnue/mod.rs` as `BASALT_NET`, for its
//! `include_bytes!`.
//!
//! A file that cannot be a Basalt net fails the build here, with a message that names it,
//! rather than a binary that panics on its first evaluation. The checks are the cheap ones a
//! build script can make without the crate (regular file, size, magic, version);
//! `Network::from_bytes` checks the rest when the binary first evaluates, and
//! tests/build_script.rs holds these constants equal to the crate's.

use std::ffi::OsStr;
use std::fs;
use std::path::{Path, PathBuf};

/// The environment variable that names another net.
pub const EVALFILE_VAR: &str = "BASALT_EVALFILE";
/// The committed net, from the package root.
pub const DEFAULT_NET: &str = "nets/basalt.nnue";
/// `nnue::MAGIC`: the first bytes of every net file.
pub const MAGIC: &[u8; 8] = b"BSLTNNUE";
/// `nnue::FORMAT_VERSION`: the newest net format this source reads (versions 1 to it).
pub const FORMAT_VERSION: u32 = 3;
/// `nnue::MAX_FILE_BYTES`: the largest net the format allows.
pub const MAX_FILE_BYTES: u64 = 100_733_072;

/// The net to embed: `evalfile` when it is set and not empty (relative to `root`, the
/// package root, unless absolute), else the committed net; checked by `check_net`.
pub fn chosen_net(root: &Path, evalfile: Option<&OsStr>) -> Result<PathBuf, String> {
    let path = match evalfile.filter(|v| !v.is_empty()) {
        Some(value) => root.join(value),
        None => root.join(DEFAULT_NET),
    };
    check_net(&path)?;
    Ok(path)
}

/// Whether `path` can be a Basalt net: a regular file (a symlink followed) of a size the
/// format allows, starting with the magic and a version this source reads.
pub fn check_net(path: &Path) -> Result<(), String> {
    let named = |what: String| format!("{EVALFILE_VAR} / EVALFILE {}: {what}", path.display());
    let metadata = fs::metadata(path).map_err(|e| named(e.to_string()))?;
    if !metadata.is_file() {
        return Err(named("not a regular file".into()));
    }
    if metadata.len() > MAX_FILE_BYTES {
        return Err(named(format!(
            "{} bytes, more than the largest net the format allows ({MAX_FILE_BYTES})",
            metadata.len()
        )));
    }
    let bytes = fs::read(path).map_err(|e| named(e.to_string()))?;
    if bytes.len() < 12 || &bytes[..8] != MAGIC {
        return Err(named(
            "not a Basalt network file (it does not start with BSLTNNUE)".into(),
        ));
    }
    let version = u32::from_le_bytes(bytes[8..12].try_into().expect("4 bytes"));
    if !(1..=FORMAT_VERSION).contains(&version) {
        return Err(named(format!(
            "format version {version}; this source reads versions 1 to {FORMAT_VERSION}"
        )));
    }
    if path.to_str().is_none() {
        return Err(named("the path is not UTF-8".into()));
    }
    Ok(())
}

fn main() {
    println!("cargo:rerun-if-env-changed={EVALFILE_VAR}");
    let root = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let evalfile = std::env::var_os(EVALFILE_VAR);
    match chosen_net(&root, evalfile.as_deref()) {
        Ok(net) => {
            println!("cargo:rerun-if-changed={}", net.display());
            println!("cargo:rustc-env=BASALT_NET={}", net.display());
        }
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    }
}
