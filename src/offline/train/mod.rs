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
pub mod kernels;
pub mod net_file;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};

use crate::nnue::lanes::AlignedF32s;
use crate::nnue::{FloatNetwork, KingBuckets, FEATURES};
use adam::Adam;
use checkpoint::Checkpoint;
use data::{Record, Target, TrainingSample};
use factoriser::Factoriser;
use gradient::Scratch;

/// How often a long epoch reports its progress.
const PROGRESS_INTERVAL: Duration = Duration::from_secs(10);

/// A batch's gradient is summed in this many buffers, each over one contiguous slice of the
/// batch in order, and the buffers are then added in order: the float sums, and so the
/// trained net's bytes, are the same whatever the thread count (up to this many threads
/// share a batch). More slices would allow more threads at the price of zeroing and adding
/// more buffers every batch.
pub const GRADIENT_SLICES: usize = 8;

/// The network, its optimizer, the factoriser of a factorised net and the gradient
/// buffers of the batch's slices.
pub struct Trainer {
    network: FloatNetwork,
    adam: Adam,
    factoriser: Option<Factoriser>,
    slices: Vec<GradientSlice>,
    threads: usize,
    /// AdamW's decoupled weight decay (0: plain Adam).
    weight_decay: f32,
}

/// One slice of a batch: its gradient buffer and the scratch that computes it.
struct GradientSlice {
    gradient: AlignedF32s,
    scratch: Scratch,
}

impl GradientSlice {
    fn new(network: &FloatNetwork) -> GradientSlice {
        GradientSlice {
            gradient: AlignedF32s::zeros(network.params().len()),
            scratch: Scratch::new(network.hidden_size()),
        }
    }

    /// Replaces this slice's gradient by `scale` times the summed gradient over the
    /// records `indices`, in order; returns their summed squared error.
    fn gradient(
        &mut self,
        net: &FloatNetwork,
        records: &[Record],
        indices: &[u32],
        scale: f32,
        target: Target,
    ) -> f64 {
        self.gradient.fill(0.0);
        let mut errors = 0.0;
        for (n, &i) in indices.iter().enumerate() {
            // The records are visited in a random order, so most are a cache miss: ask for
            // the one a few samples ahead while this one trains.
            if let Some(&ahead) = indices.get(n + PREFETCH_DISTANCE) {
                prefetch(&records[ahead as usize]);
            }
            if let Some(sample) =
                TrainingSample::from_record(&records[i as usize], target, net.king_buckets())
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

/// How many samples ahead `GradientSlice::gradient` prefetches a record.
const PREFETCH_DISTANCE: usize = 4;

/// Asks the CPU to start loading the cache line that holds `record`.
#[inline]
fn prefetch(record: &Record) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        // SAFETY: a prefetch is only a hint to the cache: it never faults, reads nothing
        // into the program and writes nothing, whatever the address (and this one comes from
        // a reference). SSE, its target feature, is part of the x86_64 baseline.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(record.as_ptr().cast::<i8>()) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = record;
}

/// `items` cut into `GRADIENT_SLICES` contiguous parts in order (the last ones may be
/// empty): the same cut whatever the thread count.
fn fixed_slices<T>(items: &[T]) -> Vec<&[T]> {
    let size = items.len().div_ceil(GRADIENT_SLICES).max(1);
    let mut parts: Vec<&[T]> = items.chunks(size).collect();
    parts.resize(GRADIENT_SLICES, &[]);
    parts
}

/// Runs `work` on every element of `items`, spread over `threads` threads (element `i` on
/// thread `i % threads`); each result lands at its element's index.
fn run_spread<T: Send, R: Send + Default + Clone>(
    items: &mut [T],
    threads: usize,
    work: impl Fn(usize, &mut T) -> R + Sync,
) -> Vec<R> {
    let threads = threads.clamp(1, items.len().max(1));
    if threads == 1 {
        return items
            .iter_mut()
            .enumerate()
            .map(|(i, item)| work(i, item))
            .collect();
    }
    let mut groups: Vec<Vec<(usize, &mut T)>> = (0..threads).map(|_| Vec::new()).collect();
    for (i, item) in items.iter_mut().enumerate() {
        groups[i % threads].push((i, item));
    }
    let mut results = vec![R::default(); groups.iter().map(Vec::len).sum()];
    let work = &work;
    let done: Vec<Vec<(usize, R)>> = std::thread::scope(|scope| {
        let handles: Vec<_> = groups
            .into_iter()
            .map(|group| {
                scope.spawn(move || {
                    group
                        .into_iter()
                        .map(|(i, item)| (i, work(i, item)))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("training thread panicked"))
            .collect()
    });
    for (i, result) in done.into_iter().flatten() {
        results[i] = result;
    }
    results
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
        let slices = (0..GRADIENT_SLICES)
            .map(|_| GradientSlice::new(&network))
            .collect();
        Trainer {
            network,
            adam,
            factoriser,
            slices,
            threads: threads.clamp(1, GRADIENT_SLICES),
            weight_decay: 0.0,
        }
    }

    /// This trainer with AdamW's decoupled weight decay `decay` (0: plain Adam).
    pub fn with_weight_decay(mut self, decay: f32) -> Trainer {
        self.weight_decay = decay;
        self
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
        target: Target,
    ) -> f64 {
        if batch.is_empty() {
            return 0.0;
        }
        let scale = 1.0 / batch.len() as f32;
        let parts = fixed_slices(batch);
        let net = &self.network;
        let errors = run_spread(&mut self.slices, self.threads, |i, slice| {
            slice.gradient(net, records, parts[i], scale, target)
        });
        self.sum_slices();
        let gradient = &self.slices[0].gradient;
        let step = (learning_rate, self.weight_decay);
        match &mut self.factoriser {
            Some(factoriser) => factoriser.step(
                &mut self.network,
                &mut self.adam,
                gradient,
                step,
                self.threads,
            ),
            None => self
                .adam
                .step(self.network.params_mut(), gradient, step, self.threads),
        }
        errors.iter().sum()
    }

    /// Adds every slice's gradient to the first slice's, in slice order, each thread over
    /// its own range of parameters.
    fn sum_slices(&mut self) {
        let (first, rest) = self.slices.split_at_mut(1);
        let others: Vec<&[f32]> = rest.iter().map(|s| &*s.gradient).collect();
        let total = &mut first[0].gradient;
        let part = total.len().div_ceil(self.threads);
        let mut ranges: Vec<(usize, &mut [f32])> = total
            .chunks_mut(part)
            .enumerate()
            .map(|(i, chunk)| (i * part, chunk))
            .collect();
        run_spread(&mut ranges, self.threads, |_, (offset, chunk)| {
            for other in &others {
                add_assign(chunk, &other[*offset..*offset + chunk.len()]);
            }
        });
    }

    /// Mean loss over `records` against `target`.
    pub fn loss(&self, records: &[Record], target: Target) -> f64 {
        self.validation(records, target).target
    }

    /// The three validation figures over `records`, in fixed slices summed in order (the
    /// same figures whatever the thread count).
    pub fn validation(&self, records: &[Record], target: Target) -> Validation {
        if records.is_empty() {
            return Validation::default_nan();
        }
        let net = &self.network;
        let mut parts = fixed_slices(records);
        let sums = run_spread(&mut parts, self.threads, |_, part| {
            let mut scratch = Scratch::new(net.hidden_size());
            let mut sums = [0.0f64; 3];
            for record in part.iter() {
                let Ok(position) = data::decode(record) else {
                    continue;
                };
                let sample = TrainingSample::new(&position, Target::SCORE, net.king_buckets());
                let score = f64::from(sample.target);
                let result = f64::from(
                    TrainingSample::new(&position, Target::RESULT, net.king_buckets()).target,
                );
                let logit = gradient::logit(net, &sample, &mut scratch);
                let predicted = f64::from(gradient::sigmoid(logit));
                let trained = TrainingSample::new(&position, target, net.king_buckets());
                let on_target_scale = f64::from(gradient::sigmoid(logit * trained.gain));
                sums[0] += (on_target_scale - f64::from(trained.target)).powi(2);
                sums[1] += (predicted - score).powi(2);
                let p = predicted.clamp(1e-7, 1.0 - 1e-7);
                sums[2] -= result * p.ln() + (1.0 - result) * (1.0 - p).ln();
            }
            sums
        });
        let total = |i: usize| sums.iter().map(|s| s[i]).sum::<f64>() / records.len() as f64;
        Validation {
            target: total(0),
            score: total(1),
            result: total(2),
        }
    }
}

/// What a net scores on the validation set. `score` and `result` do not depend on the
/// target (`--wdl`, `--target-scale`): both read the net's output on its own scale
/// (EVAL_SCALE), so runs with different targets compare on them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Validation {
    /// Mean squared error against the training target (the blend of score and result).
    pub target: f64,
    /// Mean squared error against the search score alone (as a win probability).
    pub score: f64,
    /// Mean log-loss against the game result (1, 0.5 or 0 for the side to move).
    pub result: f64,
}

impl Validation {
    fn default_nan() -> Validation {
        Validation {
            target: f64::NAN,
            score: f64::NAN,
            result: f64::NAN,
        }
    }

    fn describe(&self) -> String {
        format!(
            "validation loss {} (score {}, result log-loss {})",
            format_loss(self.target),
            format_loss(self.score),
            format_loss(self.result)
        )
    }
}

/// `total[i] += other[i]`.
fn add_assign(total: &mut [f32], other: &[f32]) {
    for (t, o) in total.iter_mut().zip(other) {
        *t += o;
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
    /// How the learning rate moves from batch to batch.
    pub lr_schedule: LrSchedule,
    /// Cosine's last learning rate, as a share of `learning_rate`.
    pub lr_floor: f32,
    /// Batches over which the learning rate rises linearly from 0 at the start of a run
    /// (either schedule).
    pub warmup_batches: u64,
    /// AdamW's decoupled weight decay (0: Adam).
    pub weight_decay: f32,
    /// Which training positions are kept.
    pub filter: data::Filter,
    /// Whole files held out as the validation set (instead of the tail of `data`); a file
    /// named in both is not trained on.
    pub validation_data: Vec<PathBuf>,
    /// The loaded training records are kept in this file and read back from it by a later
    /// run on the same files with the same filter.
    pub cache: Option<PathBuf>,
    /// How the search score and the game result make the target.
    pub target: Target,
    /// Add the left-right mirror of every training record (the validation split stays as
    /// played, so its loss measures real positions).
    pub mirror: bool,
    pub threads: usize,
    pub validation_fraction: f64,
    pub seed: u64,
}

/// The learning rate's course over a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LrSchedule {
    /// `lr * lr_gamma^(epoch / lr_drop_every)`: constant within an epoch.
    Step,
    /// Half a cosine from `lr` at the first batch to `lr * lr_floor` after the last.
    Cosine,
}

impl TrainSettings {
    /// Step schedule: `learning_rate * lr_gamma^(epoch / lr_drop_every)`, epochs from 0.
    pub fn learning_rate_at(&self, epoch: u32) -> f32 {
        match self.lr_drop_every {
            0 => self.learning_rate,
            every => self.learning_rate * self.lr_gamma.powi((epoch / every) as i32),
        }
    }

    /// The learning rate of batch `batch` (from 0) of epoch `epoch` (from 0), an epoch
    /// being `batches` batches: a function of the position in the run alone, so a resumed
    /// run follows the same course.
    pub fn learning_rate_at_batch(&self, epoch: u32, batch: u64, batches: u64) -> f32 {
        let done = u64::from(epoch) * batches + batch;
        let rate = match self.lr_schedule {
            LrSchedule::Step => self.learning_rate_at(epoch),
            LrSchedule::Cosine => {
                let total = (u64::from(self.epochs) * batches).max(1);
                let progress = (done as f64 / total as f64).min(1.0);
                let floor = f64::from(self.learning_rate * self.lr_floor);
                let span = f64::from(self.learning_rate) - floor;
                (floor + span * 0.5 * (1.0 + (std::f64::consts::PI * progress).cos())) as f32
            }
        };
        if done < self.warmup_batches {
            rate * (done + 1) as f32 / self.warmup_batches as f32
        } else {
            rate
        }
    }
}

/// Loads the training records (through the cache if one is named) and the validation set:
/// the files of `validation_data`, or the tail of the data.
fn load_split(
    settings: &TrainSettings,
    log: &mut dyn FnMut(&str),
) -> Result<(Vec<Record>, Vec<Record>), String> {
    let held_out = |path: &PathBuf| settings.validation_data.contains(path);
    let training_files: Vec<&PathBuf> = settings.data.iter().filter(|p| !held_out(p)).collect();
    let started = Instant::now();
    let cannot = |e: std::io::Error| format!("cannot read data: {e}");
    let (loaded, cached) = match &settings.cache {
        Some(cache) => {
            data::load_cached(&training_files, &settings.filter, cache).map_err(cannot)?
        }
        None => (
            data::load_filtered(&training_files, &settings.filter).map_err(cannot)?,
            false,
        ),
    };
    log(&format!(
        "loaded {} records ({} MB) in {:.1} s{}; left out: {} with |score| >= {}, {} by the \
         filter ({:?}), {} malformed",
        loaded.records.len(),
        loaded.records.len() * data::RECORD_SIZE / 1_000_000,
        started.elapsed().as_secs_f64(),
        if cached { " from the cache" } else { "" },
        loaded.mate_scores,
        data::MATE_SCORE_CUTOFF,
        loaded.filtered,
        settings.filter,
        loaded.invalid,
    ));
    if settings.validation_data.is_empty() {
        if loaded.records.len() < 2 {
            return Err(format!(
                "{} usable records: too few to train",
                loaded.records.len()
            ));
        }
        return Ok(split_validation(
            loaded.records,
            settings.validation_fraction,
            settings.seed,
        ));
    }
    let mut training = loaded.records;
    if training.is_empty() {
        return Err("no usable training records".to_string());
    }
    // The validation set is the same whatever the recipe: no filter.
    let validation = data::load(&settings.validation_data)
        .map_err(|e| format!("cannot read validation data: {e}"))?
        .records;
    training.shuffle(&mut StdRng::seed_from_u64(settings.seed));
    Ok((training, validation))
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
    let (mut training, validation) = load_split(settings, log)?;
    if settings.mirror {
        let mirrored: Vec<Record> = training.iter().map(data::mirror_files).collect();
        training.extend(mirrored);
    }
    log(&format!(
        "{} training records{}, {} validation, ready in {:.1} s",
        training.len(),
        if settings.mirror { " (mirrored)" } else { "" },
        validation.len(),
        started.elapsed().as_secs_f64(),
    ));

    let threads = settings.threads.max(1);
    let (trainer, first_epoch) = if settings.resume {
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
    let mut trainer = trainer.with_weight_decay(settings.weight_decay);
    log(&format!(
        "network (768 x {}{} -> {h}) x 2 -> 1 ({}mirrored) with {} output buckets, {} \
         parameters; {}",
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
        trainer.validation(&validation, settings.target).describe(),
        h = settings.hidden
    ));
    let best_path = best_net_path(&settings.out);
    let mut best = best_so_far(settings, &best_path, &trainer, &validation);

    let batch_size = settings.batch_size.max(1);
    let batches = training.len().div_ceil(batch_size) as u64;
    for epoch in first_epoch..settings.epochs {
        let epoch_started = Instant::now();
        let mut order: Vec<u32> = (0..training.len() as u32).collect();
        order.shuffle(&mut StdRng::seed_from_u64(epoch_seed(settings.seed, epoch)));
        let (mut errors, mut seen) = (0.0, 0usize);
        let mut last_report = Instant::now();
        let mut learning_rate = settings.learning_rate_at_batch(epoch, 0, batches);
        for (b, batch) in order.chunks(batch_size).enumerate() {
            learning_rate = settings.learning_rate_at_batch(epoch, b as u64, batches);
            errors += trainer.train_batch(&training, batch, learning_rate, settings.target);
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
        let figures = trainer.validation(&validation, settings.target);
        log(&format!(
            "epoch {}/{}: lr {learning_rate:.6}, train loss {}, {}, {speed:.0} positions/s, \
             elapsed {:.0} s",
            epoch + 1,
            settings.epochs,
            format_loss(errors / seen as f64),
            figures.describe(),
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
        if figures.target < best {
            best = figures.target;
            net_file::write(&best_path, &trainer.network)
                .map_err(|e| format!("cannot write {}: {e}", best_path.display()))?;
            log(&format!(
                "  best so far: wrote {} (epoch {})",
                best_path.display(),
                epoch + 1
            ));
        }
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

/// Where the best epoch's net goes: `OUT` with `.best` before its extension
/// (`gen11.nnue` -> `gen11.best.nnue`).
pub fn best_net_path(out: &std::path::Path) -> PathBuf {
    let stem = out
        .file_stem()
        .map_or_else(Default::default, |s| s.to_os_string());
    let mut name = stem;
    name.push(".best");
    if let Some(extension) = out.extension() {
        name.push(".");
        name.push(extension);
    }
    out.with_file_name(name)
}

/// The validation loss the best net must beat: a resumed run's best file, scored again on
/// this validation set (the loss is not stored), or none.
fn best_so_far(
    settings: &TrainSettings,
    best_path: &std::path::Path,
    trainer: &Trainer,
    validation: &[Record],
) -> f64 {
    if !settings.resume || validation.is_empty() {
        return f64::INFINITY;
    }
    match net_file::read(best_path) {
        Ok(network) => {
            Trainer::resume(network, Adam::new(0), None, trainer.threads)
                .validation(validation, settings.target)
                .target
        }
        Err(_) => f64::INFINITY,
    }
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
            target: Target::blend(0.25),
            mirror: false,
            threads: 1,
            validation_fraction: 0.1,
            lr_schedule: LrSchedule::Step,
            lr_floor: 0.0,
            warmup_batches: 0,
            weight_decay: 0.0,
            filter: data::Filter::default(),
            validation_data: Vec::new(),
            cache: None,
            seed: 0,
        };
        let rates: Vec<f32> = (0..9).map(|e| settings.learning_rate_at(e)).collect();
        assert_eq!(rates[0], 0.001);
        assert_eq!(rates[3], 0.001);
        assert_eq!(rates[4], 0.0005);
        assert_eq!(rates[8], 0.00025);
    }

    /// Cosine falls from --lr at the first batch to --lr * --lr-floor at the end, batch by
    /// batch; warm-up rises linearly first; the step schedule stays constant in an epoch.
    #[test]
    fn per_batch_schedules() {
        let dir = std::env::temp_dir();
        let data = dir.join("unused");
        let cosine = TrainSettings {
            epochs: 4,
            learning_rate: 0.002,
            lr_schedule: LrSchedule::Cosine,
            lr_floor: 0.1,
            ..run_settings(&dir, &data, "schedule", 4, false)
        };
        let at = |s: &TrainSettings, epoch, batch| s.learning_rate_at_batch(epoch, batch, 10);
        assert_eq!(at(&cosine, 0, 0), 0.002);
        let middle = at(&cosine, 2, 0);
        assert!((middle - 0.0011).abs() < 1e-7, "{middle}");
        let last = at(&cosine, 3, 9);
        assert!(last > 0.0002 && last < 0.000205, "{last}");
        let rates: Vec<f32> = (0..40)
            .map(|b| at(&cosine, b / 10, u64::from(b % 10)))
            .collect();
        assert!(rates.windows(2).all(|w| w[1] < w[0]), "{rates:?}");
        let warm = TrainSettings {
            warmup_batches: 4,
            ..cosine.clone()
        };
        assert_eq!(at(&warm, 0, 0), 0.002 * 0.25);
        assert_eq!(at(&warm, 0, 3), at(&cosine, 0, 3));
        let step = TrainSettings {
            lr_schedule: LrSchedule::Step,
            ..cosine
        };
        assert_eq!(at(&step, 1, 0), at(&step, 1, 9));
        assert_eq!(at(&step, 2, 0), 0.002 * 0.3);
    }

    /// Whole files as the validation set: not trained on even when also named as data,
    /// every epoch prints the three figures, the best epoch's net is kept beside the last,
    /// and a cache gives the same run.
    #[test]
    fn validation_files_best_net_and_cache() {
        let dir = std::env::temp_dir().join(format!("basalt-train-valid-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (train_file, valid_file) = (dir.join("train.bin"), dir.join("valid.bin"));
        std::fs::write(&train_file, random_records(900, 40).concat()).unwrap();
        std::fs::write(&valid_file, random_records(100, 41).concat()).unwrap();
        let settings = |name: &str, cache: Option<PathBuf>| TrainSettings {
            data: vec![train_file.clone(), valid_file.clone()],
            validation_data: vec![valid_file.clone()],
            lr_schedule: LrSchedule::Cosine,
            warmup_batches: 3,
            weight_decay: 0.01,
            filter: data::Filter {
                min_ply: 2,
                max_score: Some(2000),
            },
            cache,
            ..run_settings(&dir, &train_file, name, 3, false)
        };
        let mut lines = Vec::new();
        run(&settings("plain", None), &mut |l| lines.push(l.to_string())).unwrap();
        let loaded = lines.iter().find(|l| l.starts_with("loaded")).unwrap();
        assert!(loaded.contains("by the filter"), "{loaded}");
        let ready = lines
            .iter()
            .find(|l| l.contains("training records"))
            .unwrap();
        assert!(ready.contains(", 100 validation"), "{ready}");
        let epochs: Vec<&String> = lines.iter().filter(|l| l.starts_with("epoch ")).collect();
        assert_eq!(epochs.len(), 3);
        assert!(epochs
            .iter()
            .all(|l| l.contains("(score ") && l.contains("result log-loss")));
        let best = dir.join("plain.best.nnue");
        assert_eq!(best_net_path(&dir.join("plain.nnue")), best);
        assert!(best.exists() && lines.iter().any(|l| l.contains("best so far")));

        let cache = dir.join("train.cache");
        let mut cached_lines = Vec::new();
        run(&settings("first", Some(cache.clone())), &mut |_| {}).unwrap();
        run(&settings("second", Some(cache)), &mut |l| {
            cached_lines.push(l.to_string())
        })
        .unwrap();
        assert!(cached_lines.iter().any(|l| l.contains("from the cache")));
        let read = |name: &str| std::fs::read(dir.join(name)).unwrap();
        assert_eq!(read("plain.nnue"), read("first.nnue"));
        assert_eq!(read("first.nnue"), read("second.nnue"));
        std::fs::remove_dir_all(&dir).unwrap();
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
            let before = trainer.loss(validation, Target::blend(0.25));
            let mut order: Vec<u32> = (0..training.len() as u32).collect();
            let mut losses = Vec::new();
            for epoch in 0..6 {
                order.shuffle(&mut StdRng::seed_from_u64(epoch));
                for batch in order.chunks(128) {
                    trainer.train_batch(training, batch, 0.005, Target::blend(0.25));
                }
                losses.push(trainer.loss(validation, Target::blend(0.25)));
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
            target: Target::blend(0.25),
            mirror: true,
            threads: 2,
            validation_fraction: 0.1,
            lr_schedule: LrSchedule::Step,
            lr_floor: 0.0,
            warmup_batches: 0,
            weight_decay: 0.0,
            filter: data::Filter::default(),
            validation_data: Vec::new(),
            cache: None,
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

    /// One thread, two and three compute the same gradient and error to the last bit: the
    /// batch is summed in fixed slices whatever the thread count.
    #[test]
    fn threads_split_the_batch_without_changing_it() {
        let records = random_records(300, 3);
        let batch: Vec<u32> = (0..300).collect();
        let m4 = KingBuckets::named("m4").unwrap();
        let mut single = Trainer::new(16, 4, (m4, false), 1, 9);
        let e1 = single.train_batch(&records, &batch, 0.0, Target::blend(0.25));
        let g1 = single.slices[0].gradient.clone();
        assert!(g1.iter().any(|&g| g != 0.0));
        for threads in [2, 3] {
            let mut other = Trainer::new(16, 4, (m4, false), threads, 9);
            let e = other.train_batch(&records, &batch, 0.0, Target::blend(0.25));
            assert_eq!(e1.to_bits(), e.to_bits(), "{threads} threads");
            assert!(g1 == other.slices[0].gradient, "{threads} threads");
            assert_eq!(
                single.loss(&records, Target::blend(0.25)).to_bits(),
                other.loss(&records, Target::blend(0.25)).to_bits()
            );
        }
    }

    /// A whole run with one thread, two and three writes the same net and checkpoint,
    /// byte for byte.
    #[test]
    fn run_writes_the_same_bytes_whatever_the_thread_count() {
        let dir = std::env::temp_dir().join(format!("basalt-train-threads-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let data = dir.join("records.bin");
        std::fs::write(&data, random_records(1500, 31).concat()).unwrap();
        let files = |threads: usize| {
            let name = format!("t{threads}");
            let settings = TrainSettings {
                threads,
                hidden: 32,
                output_buckets: 2,
                ..run_settings(&dir, &data, &name, 2, false)
            };
            run(&settings, &mut |_| {}).unwrap();
            (
                std::fs::read(dir.join(format!("{name}.nnue"))).unwrap(),
                std::fs::read(dir.join(format!("{name}.ckpt"))).unwrap(),
            )
        };
        let one = files(1);
        assert_eq!(one, files(2));
        assert_eq!(one, files(3));
        std::fs::remove_dir_all(&dir).unwrap();
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
                    let after = line.split("validation loss ").nth(1).unwrap();
                    first = after.split(' ').next().map(|v| v.parse::<f64>().unwrap());
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
            trainer.train_batch(&records, batch, 0.01, Target::blend(0.25));
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
            let sample = TrainingSample::new(&position, Target::SCORE, &kings);
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
