//! Writes synthetic training records (random positions from random games, labelled by the
//! static evaluation) for trial runs and speed measurements of the trainer, never for a net
//! that is kept: `cargo run --release --example synthetic_records -- PATH COUNT`.

use basalt::offline::train::data::synthetic::random_records;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [path, count] = args.as_slice() else {
        eprintln!("usage: synthetic_records PATH COUNT");
        std::process::exit(2);
    };
    let count: usize = count.parse().unwrap_or_else(|_| {
        eprintln!("COUNT must be a number, not {count:?}");
        std::process::exit(2);
    });
    let records = random_records(count, 1);
    if let Err(e) = std::fs::write(path, records.concat()) {
        eprintln!("cannot write {path}: {e}");
        std::process::exit(1);
    }
}
