//! The offline tools: self-play data (`datagen`), the NNUE trainer (`train`) and the Texel
//! tuner of the hand-crafted evaluation (`texel`, behind `basalt tune`). They use the
//! engine's modules; no engine module uses them.

pub mod cli;
pub mod datagen;
pub mod texel;
pub mod train;

#[cfg(test)]
mod tests {
    use std::path::Path;

    /// Imports run one way, from the offline tools to the engine: no code outside
    /// src/offline names `offline::` (comments may), except main.rs, which dispatches to
    /// the tools.
    #[test]
    fn engine_modules_never_import_offline() {
        fn visit(dir: &Path, offenders: &mut Vec<String>) {
            for entry in std::fs::read_dir(dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    if !path.ends_with("offline") {
                        visit(&path, offenders);
                    }
                } else if path.extension().is_some_and(|e| e == "rs") && !path.ends_with("main.rs")
                {
                    let text = std::fs::read_to_string(&path).unwrap();
                    let code = |line: &&str| !line.trim_start().starts_with("//");
                    if text
                        .lines()
                        .filter(code)
                        .any(|line| line.contains("offline::"))
                    {
                        offenders.push(path.display().to_string());
                    }
                }
            }
        }
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut offenders = Vec::new();
        visit(&src, &mut offenders);
        assert!(
            offenders.is_empty(),
            "engine files naming offline::: {offenders:?}"
        );
    }
}
