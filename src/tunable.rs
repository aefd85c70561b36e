//! Tunable constants: a name, a default and the range a tuner may move it in. In a normal
//! build a [`Param`] is a constant; in a build with the `spsa` feature each is also a UCI
//! option of the same name, so a tuner (tools/spsa.py) can set it between games.
//!
//! The search declares its margins in `search/params.rs`, the time manager its plan in
//! `time.rs`; this module only holds the type, so both can sit below the UCI layer.

#[cfg(feature = "spsa")]
use std::sync::atomic::{AtomicI32, Ordering};

/// A tunable parameter with the range a tuner may move it in.
pub struct Param {
    pub name: &'static str,
    pub default: i32,
    pub min: i32,
    pub max: i32,
    #[cfg(feature = "spsa")]
    value: AtomicI32,
}

impl Param {
    pub const fn new(name: &'static str, default: i32, min: i32, max: i32) -> Param {
        Param {
            name,
            default,
            min,
            max,
            #[cfg(feature = "spsa")]
            value: AtomicI32::new(default),
        }
    }

    /// The value in use: the default in a normal build (an immutable static, so the
    /// compiler folds it like a constant).
    #[inline(always)]
    pub fn get(&self) -> i32 {
        #[cfg(feature = "spsa")]
        return self.value.load(Ordering::Relaxed);
        #[cfg(not(feature = "spsa"))]
        self.default
    }

    /// Sets the value (`spsa` builds only); out of range leaves it unchanged.
    #[cfg(feature = "spsa")]
    pub fn set(&self, value: i32) -> Result<(), String> {
        if !(self.min..=self.max).contains(&value) {
            return Err(format!(
                "option {}: {value} is out of range {}..{}; value unchanged",
                self.name, self.min, self.max
            ));
        }
        self.value.store(value, Ordering::Relaxed);
        Ok(())
    }
}

/// Declares each parameter as a `Param` static and lists them all in `TUNABLE` (one list
/// per module that uses it; `uci/options.rs` offers every list).
macro_rules! tunable {
    ($($(#[$doc:meta])* $name:ident = $default:expr, $min:expr, $max:expr;)*) => {
        $($(#[$doc])* pub static $name: $crate::tunable::Param =
            $crate::tunable::Param::new(stringify!($name), $default, $min, $max);)*
        /// Every tunable parameter of this module, in declaration order.
        pub static TUNABLE: &[&$crate::tunable::Param] = &[$(&$name),*];
    };
}
pub(crate) use tunable;

/// Held by tests that change a parameter and by those that read the defaults: tests run
/// in parallel, and the parameters are global.
#[cfg(test)]
pub static TEST_LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// `TEST_LOCK`, also after a test that held it failed.
#[cfg(test)]
pub fn test_lock() -> std::sync::MutexGuard<'static, ()> {
    TEST_LOCK
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Checks one module's list: defaults inside their ranges, names unique.
#[cfg(test)]
pub fn check_list(list: &[&Param]) {
    let _values_stay = test_lock();
    let mut names: Vec<&str> = list.iter().map(|p| p.name).collect();
    for p in list {
        assert!(
            p.min < p.max && (p.min..=p.max).contains(&p.default),
            "{}",
            p.name
        );
        assert_eq!(p.get(), p.default, "{}", p.name);
    }
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), list.len());
}
