//! The durable task queue's state machine (the Scheduler–Agent–Supervisor
//! pattern): what may happen to a task record, and when.
//!
//! A record lives in a store outside this crate (memory, IndexedDB, …); this
//! module only decides. Every transition takes the record and the current
//! time and returns the new record, or `None` when the transition is not
//! allowed from that state — the caller then writes the new record with a
//! compare-and-set, so two instances that decide the same transition at once
//! cannot both win. The owner of a lock (`lockedBy`, a string) is the
//! caller's business: the state machine needs only numbers, which keeps it
//! free of allocation and the wasm boundary plain.
//!
//! ```text
//!            claim (pending, nextAttemptAt <= now)
//!   pending ───────────────────────────────────────▶ processing
//!      ▲                                        │  │  │
//!      │ fail / sweep (failures < maxFailures)  │  │  │ complete (now <= completeBy)
//!      └────────────────────────────────────────┘  │  ▼
//!                          fail / sweep (failures  │  processed
//!                          reach maxFailures),     ▼
//!                          fail_permanently       error
//!                                                  ▲
//!   pending ───────────────────────────────────────┘
//!            expire (it cannot run by created_at + maxRetentionMs)
//! ```
//!
//! A task's age bounds it too: [`QueueConfig::max_retention_ms`] after its
//! creation it is no longer claimed, and a pending task whose next attempt
//! would come later is [`Due::Expire`] at once (why wait for a retry that
//! cannot happen).
//!
//! The retry delay comes from the calculator ([`Backoff::sample_at`]) with a
//! generator seeded from the task's own seed and its failure count, so the
//! delay after failure n is a pure function of the record: any instance that
//! handles the failure computes the same wait, and nothing but the seed and
//! the count has to be stored.

use crate::backoff::Backoff;
use crate::config::{Config, ConfigError};
use crate::math::MAX_DELAY_MS;
use crate::rng::seeded_rng;

/// Where a task is in its life. The discriminants are stable: the wasm
/// boundary passes a state as this number.
///
/// ```
/// use wasm_backoff_core::queue::TaskState;
/// assert!(TaskState::Processed.is_final() && !TaskState::Pending.is_final());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum TaskState {
    /// Waiting for `next_attempt_at`, then for an instance to claim it.
    Pending = 0,
    /// Claimed: an instance runs its handler until `complete_by`.
    Processing = 1,
    /// Done (final).
    Processed = 2,
    /// Given up: a permanent failure, or `max_failures` failures (final).
    Error = 3,
}

impl TaskState {
    /// The state with discriminant `n`, if any.
    ///
    /// ```
    /// use wasm_backoff_core::queue::TaskState;
    /// assert_eq!(TaskState::from_u8(1), Some(TaskState::Processing));
    /// assert_eq!(TaskState::from_u8(9), None);
    /// ```
    pub const fn from_u8(n: u8) -> Option<TaskState> {
        match n {
            0 => Some(TaskState::Pending),
            1 => Some(TaskState::Processing),
            2 => Some(TaskState::Processed),
            3 => Some(TaskState::Error),
            _ => None,
        }
    }

    /// Whether nothing can happen to the task any more.
    ///
    /// ```
    /// use wasm_backoff_core::queue::TaskState;
    /// assert!(TaskState::Error.is_final());
    /// ```
    pub const fn is_final(self) -> bool {
        matches!(self, TaskState::Processed | TaskState::Error)
    }
}

/// The numeric part of a task record (the id, payload and lock owner stay
/// with the caller). Times are milliseconds on the caller's clock.
///
/// ```
/// use wasm_backoff_core::queue::{Task, TaskState};
/// let t = Task::new(10.0, 42);
/// assert_eq!((t.state, t.failure_count, t.next_attempt_at), (TaskState::Pending, 0, 10.0));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Task {
    /// Current state.
    pub state: TaskState,
    /// Failures so far: handler rejections and expired leases.
    pub failure_count: u32,
    /// Pending only: not to be claimed before this time.
    pub next_attempt_at: f64,
    /// Processing only: the lease ends here; after it the handler's result
    /// no longer counts and the supervisor sweep takes the task back.
    pub complete_by: f64,
    /// Seeds the retry delays of this task (see [`Queue::retry_delay`]).
    pub seed: u64,
    /// When the task was made: its age counts from here
    /// ([`QueueConfig::max_retention_ms`]).
    pub created_at: f64,
}

impl Task {
    /// A new task, pending and due at once.
    ///
    /// ```
    /// use wasm_backoff_core::queue::Task;
    /// assert_eq!(Task::new(5.0, 1).seed, 1);
    /// ```
    pub const fn new(now: f64, seed: u64) -> Task {
        Task {
            state: TaskState::Pending,
            failure_count: 0,
            next_attempt_at: now,
            complete_by: 0.0,
            seed,
            created_at: now,
        }
    }

    /// The same task, first due at `at` rather than at once (a delayed enqueue).
    ///
    /// ```
    /// use wasm_backoff_core::queue::Task;
    /// let t = Task::new(5.0, 1).not_before(50.0);
    /// assert_eq!((t.created_at, t.next_attempt_at), (5.0, 50.0));
    /// ```
    pub const fn not_before(mut self, at: f64) -> Task {
        self.next_attempt_at = at;
        self
    }
}

/// What an instance may do with a record at a given time.
///
/// ```
/// use wasm_backoff_core::queue::*;
/// use wasm_backoff_core::{Config, Jitter};
/// let q = Queue::new(QueueConfig::new().lease_ms(1000.0).max_failures(2).backoff(Config::new().jitter(Jitter::None))).unwrap();
/// assert_eq!(q.due(&Task::new(10.0, 1), 5.0), Due::Wait);
/// assert_eq!(q.due(&Task::new(10.0, 1), 10.0), Due::Claim);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Due {
    /// Nothing now: pending but not yet due, processing within its lease, or final.
    Wait = 0,
    /// Pending and due: [`Queue::claim`] it.
    Claim = 1,
    /// Processing past its lease (the instance crashed, hung or was closed):
    /// [`Queue::sweep`] it.
    Sweep = 2,
    /// Pending, and it cannot be attempted by `created_at` +
    /// `max_retention_ms` (that time has passed, or its next attempt comes
    /// later): [`Queue::expire`] it.
    Expire = 3,
}

/// The queue's policy, validated by [`Queue::new`].
///
/// ```
/// use wasm_backoff_core::queue::QueueConfig;
/// assert_eq!((QueueConfig::new().lease_ms, QueueConfig::new().max_failures), (30_000.0, 5));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct QueueConfig {
    /// How long a claim lasts, in ms: `complete_by = now + lease_ms`. In
    /// (0, 2^31 − 1]: the JS layer aborts the handler with a timer at
    /// `complete_by`. Default 30 000.
    pub lease_ms: f64,
    /// The failure that makes a task `error` (1 = no retry). Default 5.
    pub max_failures: u32,
    /// The retry delays. Its `max_attempts` and `max_elapsed_ms` play no
    /// part: `max_failures` is the queue's limit. Default [`Config::new`].
    pub backoff: Config,
    /// How long a task may live, in ms from its `created_at`: it is not
    /// claimed after that, and ends in error ([`Due::Expire`]). Default
    /// +Infinity (no limit).
    pub max_retention_ms: f64,
}

impl Default for QueueConfig {
    fn default() -> Self {
        Self::new()
    }
}

impl QueueConfig {
    /// The defaults: 30 s leases, 5 failures, the calculator's default schedule.
    ///
    /// ```
    /// use wasm_backoff_core::queue::QueueConfig;
    /// assert!(QueueConfig::new().validate().is_ok());
    /// ```
    pub const fn new() -> Self {
        QueueConfig {
            lease_ms: 30_000.0,
            max_failures: 5,
            backoff: Config::new(),
            max_retention_ms: f64::INFINITY,
        }
    }
    /// Sets [`QueueConfig::lease_ms`].
    ///
    /// ```
    /// use wasm_backoff_core::queue::{QueueConfig, QueueError};
    /// assert_eq!(QueueConfig::new().lease_ms(0.0).validate(), Err(QueueError::LeaseMs));
    /// ```
    pub const fn lease_ms(mut self, ms: f64) -> Self {
        self.lease_ms = ms;
        self
    }
    /// Sets [`QueueConfig::max_failures`].
    ///
    /// ```
    /// use wasm_backoff_core::queue::{QueueConfig, QueueError};
    /// assert_eq!(QueueConfig::new().max_failures(0).validate(), Err(QueueError::MaxFailures));
    /// ```
    pub const fn max_failures(mut self, n: u32) -> Self {
        self.max_failures = n;
        self
    }
    /// Sets [`QueueConfig::backoff`].
    ///
    /// ```
    /// use wasm_backoff_core::queue::{QueueConfig, QueueError};
    /// use wasm_backoff_core::{Config, ConfigError};
    /// let bad = QueueConfig::new().backoff(Config::new().factor(0.0));
    /// assert_eq!(bad.validate(), Err(QueueError::Backoff(ConfigError::Factor)));
    /// ```
    pub const fn backoff(mut self, cfg: Config) -> Self {
        self.backoff = cfg;
        self
    }
    /// Sets [`QueueConfig::max_retention_ms`].
    ///
    /// ```
    /// use wasm_backoff_core::queue::{QueueConfig, QueueError};
    /// assert_eq!(QueueConfig::new().max_retention_ms(0.0).validate(), Err(QueueError::MaxRetentionMs));
    /// assert!(QueueConfig::new().max_retention_ms(f64::INFINITY).validate().is_ok());
    /// ```
    pub const fn max_retention_ms(mut self, ms: f64) -> Self {
        self.max_retention_ms = ms;
        self
    }

    /// Checks every field; the error names the offending option.
    ///
    /// ```
    /// use wasm_backoff_core::queue::QueueConfig;
    /// assert!(QueueConfig::new().lease_ms(f64::NAN).validate().is_err());
    /// ```
    pub fn validate(&self) -> Result<(), QueueError> {
        if !(self.lease_ms > 0.0 && self.lease_ms <= MAX_DELAY_MS) {
            return Err(QueueError::LeaseMs);
        }
        if self.max_failures == 0 {
            return Err(QueueError::MaxFailures);
        }
        if self.max_retention_ms.is_nan() || self.max_retention_ms <= 0.0 {
            return Err(QueueError::MaxRetentionMs);
        }
        self.backoff.validate().map_err(QueueError::Backoff)
    }
}

/// A rejected queue option. As with [`ConfigError`], the message starts with
/// the option's name.
///
/// ```
/// use wasm_backoff_core::queue::{Queue, QueueConfig, QueueError};
/// assert_eq!(Queue::new(QueueConfig::new().max_failures(0)).err(), Some(QueueError::MaxFailures));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueueError {
    /// `lease_ms` / `leaseMs`.
    LeaseMs,
    /// `max_failures` / `maxFailures`.
    MaxFailures,
    /// `max_retention_ms` / `maxRetentionMs`.
    MaxRetentionMs,
    /// An option of the retry schedule.
    Backoff(ConfigError),
}

impl QueueError {
    /// A message naming the option and the accepted range.
    ///
    /// ```
    /// use wasm_backoff_core::queue::QueueError;
    /// assert!(QueueError::LeaseMs.message().starts_with("leaseMs"));
    /// ```
    pub const fn message(self) -> &'static str {
        match self {
            QueueError::LeaseMs => "leaseMs must be a number > 0 and <= 2147483647",
            QueueError::MaxFailures => "maxFailures must be an integer >= 1 or Infinity",
            QueueError::MaxRetentionMs => "maxRetentionMs must be a number > 0 or Infinity",
            QueueError::Backoff(e) => e.message(),
        }
    }
}

/// The state machine with its validated policy. Holds no task state: every
/// method is a pure function of its arguments.
///
/// ```
/// use wasm_backoff_core::queue::{Queue, QueueConfig, Task, TaskState};
/// use wasm_backoff_core::{Config, Jitter};
/// let q = Queue::new(QueueConfig::new().lease_ms(1000.0).backoff(Config::new().jitter(Jitter::None))).unwrap();
/// let claimed = q.claim(&Task::new(0.0, 7), 10.0).unwrap();
/// assert_eq!((claimed.state, claimed.complete_by), (TaskState::Processing, 1010.0));
/// let retry = q.fail(&claimed, 20.0).unwrap(); // back to pending after the first delay
/// assert_eq!((retry.state, retry.next_attempt_at), (TaskState::Pending, 120.0));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Queue {
    cfg: QueueConfig,
}

impl Queue {
    /// Validates `cfg` (the error names the option).
    ///
    /// ```
    /// use wasm_backoff_core::queue::*;
    /// use wasm_backoff_core::{Config, Jitter};
    /// let q = Queue::new(QueueConfig::new().lease_ms(1000.0).max_failures(2).backoff(Config::new().jitter(Jitter::None))).unwrap();
    /// assert_eq!(q.config().max_failures, 2);
    /// ```
    pub fn new(cfg: QueueConfig) -> Result<Queue, QueueError> {
        cfg.validate()?;
        Ok(Queue { cfg })
    }

    /// The validated policy.
    ///
    /// ```
    /// use wasm_backoff_core::queue::*;
    /// use wasm_backoff_core::{Config, Jitter};
    /// let q = Queue::new(QueueConfig::new().lease_ms(1000.0).max_failures(2).backoff(Config::new().jitter(Jitter::None))).unwrap();
    /// assert_eq!(q.config().lease_ms, 1000.0);
    /// ```
    pub fn config(&self) -> &QueueConfig {
        &self.cfg
    }

    /// What may be done with `task` at `now`. A lease is over once `now`
    /// passes `complete_by` (at `complete_by` itself it still holds), the
    /// same instant at which [`Queue::complete`] stops accepting.
    ///
    /// ```
    /// use wasm_backoff_core::queue::*;
    /// use wasm_backoff_core::{Config, Jitter};
    /// let q = Queue::new(QueueConfig::new().lease_ms(1000.0).max_failures(2).backoff(Config::new().jitter(Jitter::None))).unwrap();
    /// let c = q.claim(&Task::new(0.0, 1), 0.0).unwrap();
    /// assert_eq!(q.due(&c, 1001.0), Due::Sweep); // the lease is over
    /// ```
    pub fn due(&self, task: &Task, now: f64) -> Due {
        match task.state {
            TaskState::Pending if self.too_old(task, now) => Due::Expire,
            TaskState::Pending if task.next_attempt_at <= now => Due::Claim,
            TaskState::Processing if now > task.complete_by => Due::Sweep,
            _ => Due::Wait,
        }
    }

    /// Whether pending `task` can no longer be attempted within its
    /// retention: `now` or its next attempt is past `created_at +
    /// max_retention_ms` (a NaN time counts as too old: it never comes).
    fn too_old(&self, task: &Task, now: f64) -> bool {
        let last = task.created_at + self.cfg.max_retention_ms;
        !(now <= last && task.next_attempt_at <= last)
    }

    /// pending (due) → processing until `now + lease_ms`.
    ///
    /// ```
    /// use wasm_backoff_core::queue::*;
    /// use wasm_backoff_core::{Config, Jitter};
    /// let q = Queue::new(QueueConfig::new().lease_ms(1000.0).max_failures(2).backoff(Config::new().jitter(Jitter::None))).unwrap();
    /// assert!(q.claim(&Task::new(50.0, 1), 10.0).is_none(), "not due yet");
    /// ```
    pub fn claim(&self, task: &Task, now: f64) -> Option<Task> {
        if self.due(task, now) != Due::Claim {
            return None;
        }
        Some(Task {
            state: TaskState::Processing,
            complete_by: now + self.cfg.lease_ms,
            ..*task
        })
    }

    /// processing → processed, while the lease holds. After `complete_by`
    /// the agent has given up: the result is refused and the sweep counts
    /// the attempt as a failure (handlers must be idempotent).
    ///
    /// ```
    /// use wasm_backoff_core::queue::*;
    /// use wasm_backoff_core::{Config, Jitter};
    /// let q = Queue::new(QueueConfig::new().lease_ms(1000.0).max_failures(2).backoff(Config::new().jitter(Jitter::None))).unwrap();
    /// let c = q.claim(&Task::new(0.0, 1), 0.0).unwrap();
    /// assert_eq!(q.complete(&c, 500.0).unwrap().state, TaskState::Processed);
    /// assert!(q.complete(&c, 1001.0).is_none(), "too late: the sweep takes it back");
    /// ```
    pub fn complete(&self, task: &Task, now: f64) -> Option<Task> {
        if task.state != TaskState::Processing || now > task.complete_by {
            return None;
        }
        Some(Task {
            state: TaskState::Processed,
            ..*task
        })
    }

    /// A retryable failure of a processing task (the handler rejected): one
    /// more failure, then back to pending after the retry delay, or to
    /// error when the count reaches `max_failures`.
    ///
    /// ```
    /// use wasm_backoff_core::queue::*;
    /// use wasm_backoff_core::{Config, Jitter};
    /// let q = Queue::new(QueueConfig::new().lease_ms(1000.0).max_failures(2).backoff(Config::new().jitter(Jitter::None))).unwrap();
    /// let c = q.claim(&Task::new(0.0, 1), 0.0).unwrap();
    /// let once = q.fail(&c, 0.0).unwrap();
    /// assert_eq!((once.state, once.next_attempt_at), (TaskState::Pending, 100.0));
    /// let again = q.fail(&q.claim(&once, 100.0).unwrap(), 100.0).unwrap();
    /// assert_eq!(again.state, TaskState::Error); // the 2nd failure of 2
    /// ```
    pub fn fail(&self, task: &Task, now: f64) -> Option<Task> {
        if task.state != TaskState::Processing {
            return None;
        }
        let failures = task.failure_count.saturating_add(1);
        if failures >= self.cfg.max_failures {
            return Some(Task {
                state: TaskState::Error,
                failure_count: failures,
                ..*task
            });
        }
        Some(Task {
            state: TaskState::Pending,
            failure_count: failures,
            next_attempt_at: now + self.retry_delay(task.seed, failures),
            ..*task
        })
    }

    /// processing → error at once (the handler said the task can never
    /// succeed). The failure is counted.
    ///
    /// ```
    /// use wasm_backoff_core::queue::*;
    /// use wasm_backoff_core::{Config, Jitter};
    /// let q = Queue::new(QueueConfig::new().lease_ms(1000.0).max_failures(2).backoff(Config::new().jitter(Jitter::None))).unwrap();
    /// let c = q.claim(&Task::new(0.0, 1), 0.0).unwrap();
    /// assert_eq!(q.fail_permanently(&c).unwrap().state, TaskState::Error);
    /// ```
    pub fn fail_permanently(&self, task: &Task) -> Option<Task> {
        if task.state != TaskState::Processing {
            return None;
        }
        Some(Task {
            state: TaskState::Error,
            failure_count: task.failure_count.saturating_add(1),
            ..*task
        })
    }

    /// The supervisor: a processing task whose lease expired counts as a
    /// failed attempt (see [`Queue::fail`]); anything else is left alone.
    ///
    /// ```
    /// use wasm_backoff_core::queue::*;
    /// use wasm_backoff_core::{Config, Jitter};
    /// let q = Queue::new(QueueConfig::new().lease_ms(1000.0).max_failures(2).backoff(Config::new().jitter(Jitter::None))).unwrap();
    /// let c = q.claim(&Task::new(0.0, 1), 0.0).unwrap();
    /// assert!(q.sweep(&c, 500.0).is_none(), "the lease holds");
    /// assert_eq!(q.sweep(&c, 1001.0).unwrap().failure_count, 1);
    /// ```
    pub fn sweep(&self, task: &Task, now: f64) -> Option<Task> {
        if self.due(task, now) != Due::Sweep {
            return None;
        }
        self.fail(task, now)
    }

    /// pending → error, once the task has outlived `max_retention_ms` (see
    /// [`Due::Expire`]). The failure count is left as it is.
    ///
    /// ```
    /// use wasm_backoff_core::queue::*;
    /// let q = Queue::new(QueueConfig::new().max_retention_ms(1000.0)).unwrap();
    /// let t = Task::new(0.0, 1);
    /// assert!(q.expire(&t, 1000.0).is_none(), "still within its retention");
    /// assert_eq!(q.due(&t, 1000.5), Due::Expire);
    /// assert_eq!(q.expire(&t, 1000.5).unwrap().state, TaskState::Error);
    /// ```
    pub fn expire(&self, task: &Task, now: f64) -> Option<Task> {
        if self.due(task, now) != Due::Expire {
            return None;
        }
        Some(Task {
            state: TaskState::Error,
            ..*task
        })
    }

    /// A pending task waiting for a retry (it failed before) becomes due at
    /// `now`: what connectivity coming back (the browser's `online` or a
    /// Background Sync event) does to tasks that failed while it was gone.
    /// A task that never failed keeps its time (a delayed enqueue).
    ///
    /// ```
    /// use wasm_backoff_core::queue::*;
    /// let q = Queue::new(QueueConfig::new()).unwrap();
    /// let failed = q.fail(&q.claim(&Task::new(0.0, 1), 0.0).unwrap(), 0.0).unwrap();
    /// assert!(failed.next_attempt_at > 10.0);
    /// assert_eq!(q.retry_now(&failed, 10.0).unwrap().next_attempt_at, 10.0);
    /// assert!(q.retry_now(&Task::new(0.0, 1).not_before(50.0), 10.0).is_none());
    /// ```
    pub fn retry_now(&self, task: &Task, now: f64) -> Option<Task> {
        // (a NaN time is left alone)
        let later = task.next_attempt_at > now;
        if task.state != TaskState::Pending || task.failure_count == 0 || !later {
            return None;
        }
        Some(Task {
            next_attempt_at: now,
            ..*task
        })
    }

    /// The wait after failure `failures` (1 = the first) of the task seeded
    /// with `seed`: one draw of the delay before retry `failures` from a
    /// generator seeded with both, so it is reproducible from the record
    /// alone and differs between tasks and between failures.
    ///
    /// ```
    /// use wasm_backoff_core::queue::*;
    /// use wasm_backoff_core::{Config, Jitter};
    /// let q = Queue::new(QueueConfig::new().lease_ms(1000.0).max_failures(2).backoff(Config::new().jitter(Jitter::None))).unwrap();
    /// assert_eq!(q.retry_delay(7, 1), 100.0); // no jitter: the schedule's first delay
    /// assert_eq!(q.retry_delay(7, 2), 200.0);
    /// ```
    pub fn retry_delay(&self, seed: u64, failures: u32) -> f64 {
        // SplitMix64 (inside seeded_rng) scrambles the mixed seed, so
        // consecutive counts give unrelated streams.
        let mixed = seed ^ (failures as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        // The config was validated with the queue's, so `new` cannot fail.
        Backoff::new(self.cfg.backoff, seeded_rng(mixed)).map_or(0.0, |mut b| b.sample_at(failures))
    }
}

crate::error_with_message!(QueueError);
