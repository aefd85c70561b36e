//! `basalt train`: fits the NNUE on training records, on the CPU.
//!
//! The records are loaded raw into memory and split: the tail, as written (whole games),
//! is the validation set, the rest is shuffled once by the seed. Each epoch visits the
//! training records in a fresh seeded order, in mini-batches; a batch is split between
//! threads, each decoding its records and adding the gradient of the mean squared error
//! (sigmoid(out) - target)^2 to its own buffer, and the summed gradient takes one Adam
//! step. The learning rate drops by `lr_gamma` every `lr_drop_every` epochs. After every
//! epoch the float state goes to the checkpoint and the quantized net to its file, so an
//! interrupted run leaves both a usable net and a way to go on.

pub mod adam;
pub mod checkpoint;
pub mod data;
pub mod factoriser;
pub mod gradient;
pub mod net_file;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};

use crate::nnue::{FloatNetwork, KingBuckets, FEATURES};
use adam::Adam;
use checkpoint::Checkpoint;
use data::{Record, TrainingSample};
use factoriser::Factoriser;
use gradient::Scratch;

/// How often a long epoch reports its progress.
const PROGRESS_INTERVAL: Duration = Duration::from_secs(10);

/// The network, its optimizer, the factoriser of a factorised net and one gradient buffer
/// per thread.
pub struct Trainer {
    network: FloatNetwork,
    adam: Adam,
    factoriser: Option<Factoriser>,
    workers: Vec<GradientWorker>,
}

struct GradientWorker {
    gradient: Vec<f32>,
    scratch: Scratch,
}

impl GradientWorker {
    fn new(network: &FloatNetwork) -> GradientWorker {
        GradientWorker {
            gradient: vec![0.0; network.params().len()],
            scratch: Scratch::new(network.hidden_size()),
        }
    }

    /// Replaces this worker's gradient by `scale` times the summed gradient over the
    /// records `indices`; returns their summed squared error.
    fn gradient(
        &mut self,
        net: &FloatNetwork,
        records: &[Record],
        indices: &[u32],
        scale: f32,
        wdl: f32,
    ) -> f64 {
        self.gradient.fill(0.0);
        let mut errors = 0.0;
        for &i in indices {
            if let Some(sample) =
                TrainingSample::from_record(&records[i as usize], wdl, net.king_buckets())
            {
                let error = gradient::add_gradient(
                    net,
                    &sample,
                    scale,
                    &mut self.gradient,
                    &mut self.scratch,
                );
                errors += f64::from(error);
            }
        }
        errors
    }
}

impl Trainer {
    /// A freshly initialised network (seeded) with `buckets` output buckets and the king
    /// buckets `kings`, trained by `threads` threads. Factorised, every king bucket starts
    /// as the same random rows, all of them shared (see `factoriser`).
    pub fn new(
        hidden: usize,
        buckets: usize,
        (kings, factorise): (KingBuckets, bool),
        threads: usize,
        seed: u64,
    ) -> Trainer {
        let rng = &mut StdRng::seed_from_u64(seed);
        let (network, factoriser) = if factorise {
            let network = initial_network(hidden, buckets, KingBuckets::NONE, rng)
                .with_king_buckets(kings)
                .expect("a net without king buckets takes any layout");
            let factoriser = Factoriser::from_network(&network);
            (network, Some(factoriser))
        } else {
            (initial_network(hidden, buckets, kings, rng), None)
        };
        let adam = Adam::new(network.params().len());
        Trainer::resume(network, adam, factoriser, threads)
    }

    pub fn resume(
        network: FloatNetwork,
        adam: Adam,
        factoriser: Option<Factoriser>,
        threads: usize,
    ) -> Trainer {
        let workers = (0..threads.max(1))
            .map(|_| GradientWorker::new(&network))
            .collect();
        Trainer {
            network,
            adam,
            factoriser,
            workers,
        }
    }

    pub fn network(&self) -> &FloatNetwork {
        &self.network
    }

    /// One Adam step on the mean loss over `records[batch]`; returns the batch's summed
    /// squared error.
    pub fn train_batch(
        &mut self,
        records: &[Record],
        batch: &[u32],
        learning_rate: f32,
        wdl: f32,
    ) -> f64 {
        if batch.is_empty() {
            return 0.0;
        }
        let threads = self.workers.len();
        let scale = 1.0 / batch.len() as f32;
        let parts: Vec<&[u32]> = batch.chunks(batch.len().div_ceil(threads)).collect();
        let net = &self.network;
        let workers = &mut self.workers[..parts.len()];
        let errors = if let [worker] = workers {
            worker.gradient(net, records, batch, scale, wdl)
        } else {
            std::thread::scope(|scope| {
                let handles: Vec<_> = workers
                    .iter_mut()
                    .zip(&parts)
                    .map(|(worker, part)| {
                        scope.spawn(move || worker.gradient(net, records, part, scale, wdl))
                    })
                    .collect();
                handles
                    .into_iter()
                    .map(|h| h.join().expect("training thread panicked"))
                    .sum()
            })
        };
        let (first, rest) = workers.split_at_mut(1);
        let gradient = &mut first[0].gradient;
        for other in rest {
            for (g, o) in gradient.iter_mut().zip(&other.gradient) {
                *g += o;
            }
        }
        match &mut self.factoriser {
            Some(factoriser) => factoriser.step(
                &mut self.network,
                &mut self.adam,
                gradient,
                learning_rate,
                threads,
            ),
            None => self
                .adam
                .step(self.network.params_mut(), gradient, learning_rate, threads),
        }
        errors
    }

    /// Mean loss over `records`, split between the threads.
    pub fn loss(&self, records: &[Record], wdl: f32) -> f64 {
        if records.is_empty() {
            return f64::NAN;
        }
        let net = &self.network;
        let part_loss = |part: &[Record]| -> f64 {
            let mut scratch = Scratch::new(net.hidden_size());
            part.iter()
                .filter_map(|r| TrainingSample::from_record(r, wdl, net.king_buckets()))
                .map(|s| f64::from(gradient::squared_error(net, &s, &mut scratch)))
                .sum()
        };
        let part = records.len().div_ceil(self.workers.len());
        let total: f64 = std::thread::scope(|scope| {
            let handles: Vec<_> = records
                .chunks(part)
                .map(|p| scope.spawn(move || part_loss(p)))
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("validation thread panicked"))
                .sum()
        });
        total / records.len() as f64
    }
}

/// The network a fresh run starts from: weights uniform in +-1/sqrt(fan-in) of their
/// layer, biases zero. The fan-in of a feature weight is taken as 768 whatever the king
/// buckets: a perspective sees one king bucket's rows at a time.
pub fn initial_network(
    hidden: usize,
    buckets: usize,
    kings: KingBuckets,
    rng: &mut impl Rng,
) -> FloatNetwork {
    let mut net = FloatNetwork::zeros(hidden, buckets, kings);
    let feature_range = 1.0 / (FEATURES as f32).sqrt();
    let output_range = 1.0 / ((2 * hidden) as f32).sqrt();
    let tensors = net.tensors_mut();
    for w in tensors.feature_weights {
        *w = rng.random_range(-feature_range..feature_range);
    }
    for w in tensors.output_weights {
        *w = rng.random_range(-output_range..output_range);
    }
    net
}

/// Everything `basalt train` is told on its command line.
#[derive(Clone, Debug)]
pub struct TrainSettings {
    pub data: Vec<PathBuf>,
    /// Quantized net, written after every epoch.
    pub out: PathBuf,
    /// Float state (parameters, Adam moments, epochs done), written after every epoch.
    pub checkpoint: PathBuf,
    /// Continue from `checkpoint` instead of a fresh network.
    pub resume: bool,
    /// Start from this net file's weights (with fresh Adam moments) instead of random ones:
    /// a later session goes on from the committed net with its own new data.
    pub init: Option<PathBuf>,
    pub hidden: usize,
    /// Output buckets (1, 2, 4 or 8). From `init`'s net of one bucket, every bucket starts
    /// as a copy of it.
    pub output_buckets: usize,
    /// King buckets. From `init`'s net without them, every bucket starts as a copy of its
    /// input weights.
    pub king_buckets: KingBuckets,
    /// Train the king buckets' rows factorised: a part every bucket shares plus each
    /// bucket's own (`factoriser`). Needs more than one king bucket.
    pub factorise: bool,
    /// Total epochs, counting those a resumed checkpoint has done.
    pub epochs: u32,
    pub batch_size: usize,
    pub learning_rate: f32,
    /// The learning rate is multiplied by `lr_gamma` every this many epochs (0: never).
    pub lr_drop_every: u32,
    pub lr_gamma: f32,
    /// Weight of the game result in the target (the rest is the search score).
    pub wdl: f32,
    /// Add the left-right mirror of every training record (the validation split stays as
    /// played, so its loss measures real positions).
    pub mirror: bool,
    pub threads: usize,
    pub validation_fraction: f64,
    pub seed: u64,
}

impl TrainSettings {
    /// Step schedule: `learning_rate * lr_gamma^(epoch / lr_drop_every)`, epochs from 0.
    pub fn learning_rate_at(&self, epoch: u32) -> f32 {
        match self.lr_drop_every {
            0 => self.learning_rate,
            every => self.learning_rate * self.lr_gamma.powi((epoch / every) as i32),
        }
    }
}

/// Splits the records into (training, validation). The validation set is the tail of the
/// data as written, not a random sample: datagen writes whole games, and the positions of
/// one game are near-copies of each other, so a random split would leave most validation
/// positions with a sibling in training and measure memory instead of judgement. The
/// training part is shuffled by `seed`. At least one record stays for training.
fn split_validation(
    mut records: Vec<Record>,
    fraction: f64,
    seed: u64,
) -> (Vec<Record>, Vec<Record>) {
    let validation_len = ((records.len() as f64 * fraction.clamp(0.0, 0.5)).round() as usize)
        .min(records.len().saturating_sub(1));
    let validation = records.split_off(records.len() - validation_len);
    records.shuffle(&mut StdRng::seed_from_u64(seed));
    (records, validation)
}

/// Runs the whole training; progress and results go to `log` line by line.
pub fn run(settings: &TrainSettings, log: &mut dyn FnMut(&str)) -> Result<(), String> {
    use crate::nnue::{HIDDEN_STEP, MAX_HIDDEN, MIN_HIDDEN, OUTPUT_BUCKET_COUNTS};
    let hidden = settings.hidden;
    if !(MIN_HIDDEN..=MAX_HIDDEN).contains(&hidden) || !hidden.is_multiple_of(HIDDEN_STEP) {
        return Err(format!(
            "--hidden {hidden}: the net format takes a multiple of {HIDDEN_STEP} in \
             {MIN_HIDDEN}..={MAX_HIDDEN}"
        ));
    }
    if !OUTPUT_BUCKET_COUNTS.contains(&settings.output_buckets) {
        return Err(format!(
            "--output-buckets {}: the net format takes 1, 2, 4 or 8",
            settings.output_buckets
        ));
    }
    if settings.factorise && settings.king_buckets.count() < 2 {
        return Err(
            "--factorise shares input rows between king buckets: it needs a --king-buckets \
             layout of more than one set (m4)"
                .to_string(),
        );
    }
    // The net to start from is read before the data, which can take minutes to load.
    let init = match (&settings.init, settings.resume) {
        (Some(path), false) => Some((path, net_file::read(path)?)),
        _ => None,
    };
    let started = Instant::now();
    let loaded = data::load(&settings.data).map_err(|e| format!("cannot read data: {e}"))?;
    let records = loaded.records;
    if records.len() < 2 {
        return Err(format!(
            "{} usable records: too few to train",
            records.len()
        ));
    }
    let (mut training, validation) =
        split_validation(records, settings.validation_fraction, settings.seed);
    if settings.mirror {
        let mirrored: Vec<Record> = training.iter().map(data::mirror_files).collect();
        training.extend(mirrored);
    }
    log(&format!(
        "loaded {} records ({} MB; {} with |score| >= {} and {} malformed left out) in {:.1} s: \
         {} training, {} validation",
        training.len() + validation.len(),
        (training.len() + validation.len()) * data::RECORD_SIZE / 1_000_000,
        loaded.mate_scores,
        data::MATE_SCORE_CUTOFF,
        loaded.invalid,
        started.elapsed().as_secs_f64(),
        training.len(),
        validation.len()
    ));

    let threads = settings.threads.max(1);
    let (mut trainer, first_epoch) = if settings.resume {
        let saved =
            checkpoint::load(&settings.checkpoint).map_err(|e| format!("cannot resume: {e}"))?;
        if saved.network.hidden_size() != settings.hidden {
            return Err(format!(
                "the checkpoint has --hidden {}, not {}",
                saved.network.hidden_size(),
                settings.hidden
            ));
        }
        if saved.network.output_buckets() != settings.output_buckets {
            return Err(format!(
                "the checkpoint has --output-buckets {}, not {}",
                saved.network.output_buckets(),
                settings.output_buckets
            ));
        }
        if *saved.network.king_buckets() != settings.king_buckets {
            return Err("the checkpoint has another --king-buckets layout".to_string());
        }
        if saved.factoriser.is_some() != settings.factorise {
            return Err(format!(
                "the checkpoint was trained {}, this run asks for {}",
                if saved.factoriser.is_some() {
                    "with --factorise"
                } else {
                    "without --factorise"
                },
                if settings.factorise { "it" } else { "none" }
            ));
        }
        if saved.seed != settings.seed {
            log(&format!(
                "warning: the checkpoint was trained with --seed {}, this run uses {}: the \
                 epochs visit the records in other orders than an uninterrupted run",
                saved.seed, settings.seed
            ));
        }
        log(&format!(
            "resuming from {} after epoch {}",
            settings.checkpoint.display(),
            saved.epochs_done
        ));
        (
            Trainer::resume(saved.network, saved.adam, saved.factoriser, threads),
            saved.epochs_done,
        )
    } else if let Some((init, network)) = init {
        if network.hidden_size() != settings.hidden {
            return Err(format!(
                "{} has {} hidden neurons, not --hidden {}",
                init.display(),
                network.hidden_size(),
                settings.hidden
            ));
        }
        let network = network
            .with_output_buckets(settings.output_buckets)
            .and_then(|network| network.with_king_buckets(settings.king_buckets))
            .map_err(|e| format!("{}: {e}", init.display()))?;
        log(&format!("starting from the weights of {}", init.display()));
        let adam = Adam::new(network.params().len());
        let factoriser = settings
            .factorise
            .then(|| Factoriser::from_network(&network));
        (Trainer::resume(network, adam, factoriser, threads), 0)
    } else {
        let trainer = Trainer::new(
            settings.hidden,
            settings.output_buckets,
            (settings.king_buckets, settings.factorise),
            threads,
            settings.seed,
        );
        (trainer, 0)
    };
    log(&format!(
        "network (768 x {}{} -> {h}) x 2 -> 1 ({}mirrored) with {} output buckets, {} \
         parameters; validation loss {}",
        trainer.network.king_buckets().count(),
        if trainer.factoriser.is_some() {
            ", factorised"
        } else {
            ""
        },
        if trainer.network.king_buckets().mirrored() {
            ""
        } else {
            "not "
        },
        trainer.network.output_buckets(),
        trainer.network.params().len(),
        format_loss(trainer.loss(&validation, settings.wdl)),
        h = settings.hidden
    ));

    let batch_size = settings.batch_size.max(1);
    for epoch in first_epoch..settings.epochs {
        let learning_rate = settings.learning_rate_at(epoch);
        let epoch_started = Instant::now();
        let mut order: Vec<u32> = (0..training.len() as u32).collect();
        order.shuffle(&mut StdRng::seed_from_u64(epoch_seed(settings.seed, epoch)));
        let (mut errors, mut seen) = (0.0, 0usize);
        let mut last_report = Instant::now();
        for batch in order.chunks(batch_size) {
            errors += trainer.train_batch(&training, batch, learning_rate, settings.wdl);
            seen += batch.len();
            if last_report.elapsed() >= PROGRESS_INTERVAL {
                last_report = Instant::now();
                log(&format!(
                    "  epoch {} {:.0}%: train loss {:.6}, {:.0} positions/s",
                    epoch + 1,
                    100.0 * seen as f64 / training.len() as f64,
                    errors / seen as f64,
                    seen as f64 / epoch_started.elapsed().as_secs_f64()
                ));
            }
        }
        let speed = seen as f64 / epoch_started.elapsed().as_secs_f64();
        let validation_loss = trainer.loss(&validation, settings.wdl);
        log(&format!(
            "epoch {}/{}: lr {learning_rate:.6}, train loss {}, validation loss {}, \
             {speed:.0} positions/s, elapsed {:.0} s",
            epoch + 1,
            settings.epochs,
            format_loss(errors / seen as f64),
            format_loss(validation_loss),
            started.elapsed().as_secs_f64()
        ));
        let saved = Checkpoint {
            network: trainer.network.clone(),
            adam: trainer.adam.clone(),
            factoriser: trainer.factoriser.clone(),
            epochs_done: epoch + 1,
            seed: settings.seed,
        };
        checkpoint::save(&settings.checkpoint, &saved).map_err(|e| {
            format!(
                "cannot write checkpoint {}: {e}",
                settings.checkpoint.display()
            )
        })?;
        write_net(settings, &trainer)?;
    }
    if first_epoch >= settings.epochs {
        log(&format!(
            "the checkpoint has done {first_epoch} of {} epochs already",
            settings.epochs
        ));
        write_net(settings, &trainer)?;
    }
    log(&format!(
        "wrote {} and {}",
        settings.out.display(),
        settings.checkpoint.display()
    ));
    Ok(())
}

/// A mean loss, or "n/a" for an empty set.
fn format_loss(loss: f64) -> String {
    if loss.is_nan() {
        "n/a".to_string()
    } else {
        format!("{loss:.6}")
    }
}

fn write_net(settings: &TrainSettings, trainer: &Trainer) -> Result<(), String> {
    net_file::write(&settings.out, &trainer.network)
        .map_err(|e| format!("cannot write {}: {e}", settings.out.display()))
}

/// The seed of an epoch's visiting order: a function of the run's seed and the epoch alone,
/// so a resumed run visits the records as an uninterrupted one would.
fn epoch_seed(seed: u64, epoch: u32) -> u64 {
    seed ^ (u64::from(epoch) + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15)
}

#[cfg(test)]
mod tests {
    use super::data::synthetic::random_records;
    use super::*;
    use crate::nnue::{Accumulator, EVAL_SCALE, QA, QB};

    #[test]
    fn learning_rate_drops_in_steps() {
        let settings = TrainSettings {
            data: Vec::new(),
            out: PathBuf::new(),
            checkpoint: PathBuf::new(),
            resume: false,
            init: None,
            hidden: 16,
            output_buckets: 1,
            king_buckets: KingBuckets::NONE,
            factorise: false,
            epochs: 10,
            batch_size: 16,
            learning_rate: 0.001,
            lr_drop_every: 4,
            lr_gamma: 0.5,
            wdl: 0.25,
            mirror: false,
            threads: 1,
            validation_fraction: 0.1,
            seed: 0,
        };
        let rates: Vec<f32> = (0..9).map(|e| settings.learning_rate_at(e)).collect();
        assert_eq!(rates[0], 0.001);
        assert_eq!(rates[3], 0.001);
        assert_eq!(rates[4], 0.0005);
        assert_eq!(rates[8], 0.00025);
    }

    /// On synthetic labels (Basalt's static evaluation of random positions) a few epochs
    /// must lower the validation loss well below where it started: with one thread and two,
    /// and with four king buckets trained factorised.
    #[test]
    fn training_lowers_the_validation_loss() {
        let records = random_records(4000, 21);
        let (training, validation) = records.split_at(3600);
        let m4 = KingBuckets::named("m4").unwrap();
        let trainers = [
            (
                "one thread",
                Trainer::new(32, 1, (KingBuckets::NONE, false), 1, 5),
            ),
            (
                "two threads",
                Trainer::new(32, 1, (KingBuckets::NONE, false), 2, 5),
            ),
            ("factorised m4", Trainer::new(32, 1, (m4, true), 1, 5)),
        ];
        for (name, mut trainer) in trainers {
            let before = trainer.loss(validation, 0.25);
            let mut order: Vec<u32> = (0..training.len() as u32).collect();
            let mut losses = Vec::new();
            for epoch in 0..6 {
                order.shuffle(&mut StdRng::seed_from_u64(epoch));
                for batch in order.chunks(128) {
                    trainer.train_batch(training, batch, 0.005, 0.25);
                }
                losses.push(trainer.loss(validation, 0.25));
            }
            let after = *losses.last().unwrap();
            eprintln!("{name}: validation loss {before:.5} -> {losses:.5?}");
            assert!(
                after < 0.6 * before && after < losses[0],
                "{name}: {before:.5} -> {losses:?}"
            );
        }
    }

    /// A short run on `data` that writes `dir/NAME.nnue` and `dir/NAME.ckpt`.
    fn run_settings(
        dir: &std::path::Path,
        data: &std::path::Path,
        name: &str,
        epochs: u32,
        resume: bool,
    ) -> TrainSettings {
        TrainSettings {
            data: vec![data.to_path_buf()],
            out: dir.join(format!("{name}.nnue")),
            checkpoint: dir.join(format!("{name}.ckpt")),
            resume,
            init: None,
            hidden: 16,
            output_buckets: 1,
            king_buckets: KingBuckets::NONE,
            factorise: false,
            epochs,
            batch_size: 64,
            learning_rate: 0.002,
            lr_drop_every: 2,
            lr_gamma: 0.3,
            wdl: 0.25,
            mirror: true,
            threads: 2,
            validation_fraction: 0.1,
            seed: 17,
        }
    }

    /// A factorised run cut and resumed ends where an uninterrupted one ends; a resume that
    /// drops or adds `--factorise`, and `--factorise` without king buckets, are refused.
    #[test]
    fn factorised_run_resumes_exactly() {
        let dir = std::env::temp_dir().join(format!("basalt-train-fact-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let data = dir.join("records.bin");
        std::fs::write(&data, random_records(800, 8).concat()).unwrap();
        let settings = |name: &str, epochs: u32, resume: bool, factorise: bool| TrainSettings {
            output_buckets: 2,
            king_buckets: KingBuckets::named("m4").unwrap(),
            factorise,
            mirror: false,
            seed: 23,
            ..run_settings(&dir, &data, name, epochs, resume)
        };
        let mut lines = Vec::new();
        run(&settings("whole", 3, false, true), &mut |l| {
            lines.push(l.to_string())
        })
        .unwrap();
        assert!(
            lines.iter().any(|l| l.contains("768 x 4, factorised ->")),
            "{lines:?}"
        );
        run(&settings("cut", 2, false, true), &mut |_| {}).unwrap();
        run(&settings("cut", 3, true, true), &mut |_| {}).unwrap();
        let whole = checkpoint::load(&dir.join("whole.ckpt")).unwrap();
        let resumed = checkpoint::load(&dir.join("cut.ckpt")).unwrap();
        assert!(whole.factoriser.is_some());
        assert!(whole == resumed, "resumed run diverged");
        let net = std::fs::read(dir.join("whole.nnue")).unwrap();
        assert_eq!(net, std::fs::read(dir.join("cut.nnue")).unwrap());
        // The file holds the sums, as an unfactorised net of the same layout.
        assert_eq!(net, whole.network.quantize().to_bytes());
        let refused = run(&settings("cut", 4, true, false), &mut |_| {}).unwrap_err();
        assert!(refused.contains("with --factorise"), "{refused}");
        run(&settings("plain", 1, false, false), &mut |_| {}).unwrap();
        let refused = run(&settings("plain", 2, true, true), &mut |_| {}).unwrap_err();
        assert!(refused.contains("without --factorise"), "{refused}");
        let refused = run(
            &TrainSettings {
                king_buckets: KingBuckets::named("mirror").unwrap(),
                ..settings("one", 1, false, true)
            },
            &mut |_| {},
        )
        .unwrap_err();
        assert!(refused.contains("more than one set"), "{refused}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// One thread and two compute the same gradient, up to float summation order.
    #[test]
    fn threads_split_the_batch_without_changing_it() {
        let records = random_records(300, 3);
        let batch: Vec<u32> = (0..300).collect();
        let m4 = KingBuckets::named("m4").unwrap();
        let mut single = Trainer::new(16, 4, (m4, false), 1, 9);
        let mut double = Trainer::new(16, 4, (m4, false), 2, 9);
        let e1 = single.train_batch(&records, &batch, 0.0, 0.25);
        let e2 = double.train_batch(&records, &batch, 0.0, 0.25);
        assert!((e1 - e2).abs() < 1e-6 * e1);
        let (g1, g2) = (&single.workers[0].gradient, &double.workers[0].gradient);
        let largest = g1.iter().fold(0.0f32, |m, g| m.max(g.abs()));
        let largest_difference = g1
            .iter()
            .zip(g2)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0f32, f32::max);
        assert!(largest > 0.0 && largest_difference < 1e-5 * largest);
    }

    #[test]
    fn validation_is_the_tail_of_the_data_as_written() {
        let records = random_records(1000, 9);
        let (training, validation) = split_validation(records.clone(), 0.1, 3);
        assert_eq!(validation, records[900..]);
        assert_eq!(training.len(), 900);
        assert_ne!(training, records[..900], "training records are shuffled");
        let mut sorted = training.clone();
        sorted.sort();
        let mut expected = records[..900].to_vec();
        expected.sort();
        assert_eq!(sorted, expected);
        let (training, validation) = split_validation(records[..1].to_vec(), 0.5, 3);
        assert_eq!((training.len(), validation.len()), (1, 0));
    }

    /// A run cut after two epochs and resumed ends where an uninterrupted run ends.
    #[test]
    fn resumed_run_matches_an_uninterrupted_one() {
        let dir = std::env::temp_dir().join(format!("basalt-train-run-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let data = dir.join("records.bin");
        std::fs::write(&data, random_records(1000, 4).concat()).unwrap();
        let settings =
            |name: &str, epochs: u32, resume: bool| run_settings(&dir, &data, name, epochs, resume);
        let mut lines = Vec::new();
        let mut log = |line: &str| lines.push(line.to_string());
        run(&settings("whole", 3, false), &mut log).unwrap();
        run(&settings("cut", 2, false), &mut log).unwrap();
        run(&settings("cut", 3, true), &mut log).unwrap();
        let whole = checkpoint::load(&dir.join("whole.ckpt")).unwrap();
        let resumed = checkpoint::load(&dir.join("cut.ckpt")).unwrap();
        assert_eq!(whole.epochs_done, 3);
        assert!(whole == resumed, "resumed run diverged");
        assert_eq!(
            std::fs::read(dir.join("whole.nnue")).unwrap(),
            std::fs::read(dir.join("cut.nnue")).unwrap()
        );
        assert!(lines.iter().any(|l| l.starts_with("epoch 3/3")));

        // --init: a run of no epochs from a net writes that net back unchanged, one more
        // epoch starts from its loss rather than a random net's, and a net of another size
        // is refused.
        let init = |name: &str, epochs: u32, hidden: usize| TrainSettings {
            init: Some(dir.join("whole.nnue")),
            hidden,
            ..settings(name, epochs, false)
        };
        run(&init("copy", 0, 16), &mut |_| {}).unwrap();
        assert_eq!(
            std::fs::read(dir.join("copy.nnue")).unwrap(),
            std::fs::read(dir.join("whole.nnue")).unwrap()
        );
        let first_validation_loss = |s: &TrainSettings| {
            let mut first = None;
            run(s, &mut |line| {
                if line.starts_with("network") && first.is_none() {
                    first = line.rsplit(' ').next().map(|v| v.parse::<f64>().unwrap());
                }
            })
            .unwrap();
            first.unwrap()
        };
        let from_net = first_validation_loss(&init("more", 1, 16));
        let from_random = first_validation_loss(&settings("fresh", 1, false));
        assert!(
            from_net < from_random,
            "from the net {from_net}, from random weights {from_random}"
        );
        let refused = run(&init("wrong", 1, 32), &mut |_| {}).unwrap_err();
        assert!(refused.contains("not --hidden 32"), "{refused}");

        // --output-buckets from a net of one bucket: every bucket starts as a copy, so the
        // widened net evaluates every position as the net it came from; a bucketed net
        // cannot be re-bucketed.
        let widened = TrainSettings {
            output_buckets: 4,
            ..init("wide", 0, 16)
        };
        run(&widened, &mut |_| {}).unwrap();
        let read = |name: &str| {
            let bytes = std::fs::read(dir.join(name)).unwrap();
            crate::nnue::Network::from_bytes(&bytes).unwrap()
        };
        let (narrow, wide) = (read("whole.nnue"), read("wide.nnue"));
        assert_eq!((narrow.output_buckets(), wide.output_buckets()), (1, 4));
        for record in random_records(100, 5) {
            let turn = data::decode(&record).unwrap().turn;
            let board = crate::offline::datagen::format::unpack(&record)
                .unwrap()
                .board;
            let pieces = board.occupied().count();
            let evaluate = |net: &crate::nnue::Network| {
                let accumulator = crate::nnue::Accumulator::from_board(net, &board);
                net.output(&accumulator, turn, pieces)
            };
            assert_eq!(evaluate(&narrow), evaluate(&wide));
        }
        let rebucket = TrainSettings {
            init: Some(dir.join("wide.nnue")),
            output_buckets: 2,
            ..settings("rebucket", 1, false)
        };
        let refused = run(&rebucket, &mut |_| {}).unwrap_err();
        assert!(
            refused.contains("4 output buckets cannot become one of 2"),
            "{refused}"
        );

        // --king-buckets m4 from a net without them: every set is a copy, so wherever
        // neither king stands on files e-h (no mirroring) the new net evaluates as the old.
        let m4 = KingBuckets::named("m4").unwrap();
        let kinged = TrainSettings {
            king_buckets: m4,
            ..init("kinged", 0, 16)
        };
        run(&kinged, &mut |_| {}).unwrap();
        let kinged_net = read("kinged.nnue");
        assert_eq!(*kinged_net.king_buckets(), m4);
        let mut compared = 0;
        for record in random_records(300, 6) {
            let turn = data::decode(&record).unwrap().turn;
            let board = crate::offline::datagen::format::unpack(&record)
                .unwrap()
                .board;
            let queenside = |color| {
                board
                    .king_of(color)
                    .is_some_and(|k| k.file() < shakmaty::File::E)
            };
            if !(queenside(shakmaty::Color::White) && queenside(shakmaty::Color::Black)) {
                continue;
            }
            let pieces = board.occupied().count();
            let evaluate = |net: &crate::nnue::Network| {
                let accumulator = crate::nnue::Accumulator::from_board(net, &board);
                net.output(&accumulator, turn, pieces)
            };
            assert_eq!(evaluate(&narrow), evaluate(&kinged_net));
            compared += 1;
        }
        assert!(compared >= 10, "{compared} positions compared");
        // One epoch of training on it, then a resume that names another layout is refused.
        run(
            &TrainSettings {
                king_buckets: m4,
                ..init("kinged", 1, 16)
            },
            &mut |_| {},
        )
        .unwrap();
        let refused = run(
            &TrainSettings {
                resume: true,
                init: None,
                ..settings("kinged", 2, true)
            },
            &mut |_| {},
        )
        .unwrap_err();
        assert!(refused.contains("--king-buckets"), "{refused}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Trains a small net briefly, writes it, reads it back and compares the integer
    /// forward pass with the float one. Against the float net on the quantization grid the
    /// integer pass may only lose its truncations (<= 2 cp). Against the unrounded float
    /// net the rounding of the weights adds more: an output weight moves by up to 1/128
    /// (QB = 64), which over 2H neurons comes to a few cp on average and some tens at worst;
    /// that is the format's resolution, not the writer's error.
    #[test]
    fn quantized_file_round_trips() {
        for layout in ["none", "mirror", "m4"] {
            round_trip(KingBuckets::named(layout).unwrap());
        }
    }

    fn round_trip(kings: KingBuckets) {
        let hidden = 32;
        let records = random_records(3000, 11);
        let mut trainer = Trainer::new(hidden, 2, (kings, false), 1, 1);
        let order: Vec<u32> = (0..records.len() as u32).collect();
        for batch in order.chunks(256).cycle().take(40) {
            trainer.train_batch(&records, batch, 0.01, 0.25);
        }
        let net = trainer.network().clone();

        let path =
            std::env::temp_dir().join(format!("basalt-quantize-{}.nnue", std::process::id()));
        net_file::write(&path, &net).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        assert_eq!(bytes, net.quantize().to_bytes());
        // The engine's reader and integer forward pass.
        let quantized = crate::nnue::Network::from_bytes(&bytes).expect("the engine reads it");
        assert_eq!(quantized.hidden_size(), hidden);
        assert_eq!(quantized.output_buckets(), 2);

        let mut on_grid = net.clone();
        let hq = kings.count() * FEATURES * hidden + hidden;
        for (i, p) in on_grid.params_mut().iter_mut().enumerate() {
            let scale = match i {
                i if i < hq => QA,
                i if i < hq + 2 * 2 * hidden => QB,
                _ => QA * QB,
            } as f32;
            *p = (*p * scale).round() / scale;
        }

        let (mut worst_grid, mut worst_float, mut total_float) = (0, 0, 0);
        let positions = random_records(200, 12);
        for record in &positions {
            let position = data::decode(record).unwrap();
            let board = crate::offline::datagen::format::unpack(record)
                .unwrap()
                .board;
            let accumulator = Accumulator::from_board(&quantized, &board);
            let pieces = board.occupied().count();
            let integer = i64::from(quantized.output(&accumulator, position.turn, pieces));
            let sample = TrainingSample::new(&position, 0.0, &kings);
            let cp = |n: &FloatNetwork| {
                let logit = gradient::logit(n, &sample, &mut Scratch::new(hidden));
                (logit * EVAL_SCALE as f32).round() as i64
            };
            worst_grid = worst_grid.max((integer - cp(&on_grid)).abs());
            worst_float = worst_float.max((integer - cp(&net)).abs());
            total_float += (integer - cp(&net)).abs();
        }
        let mean_float = total_float as f64 / positions.len() as f64;
        eprintln!(
            "integer vs float: on the grid worst {worst_grid} cp; unrounded worst {worst_float} \
             cp, mean {mean_float:.2} cp"
        );
        assert!(
            worst_grid <= 2,
            "integer vs float on the grid: {worst_grid} cp"
        );
        assert!(
            worst_float <= 40 && mean_float <= 8.0,
            "integer vs float: worst {worst_float} cp, mean {mean_float:.2} cp"
        );
    }
}
