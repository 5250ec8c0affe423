//! Engine layer, store: what the store can do now (its `Mode`, shared with the engine as
//! `StoreHealth`), and the reserve file beside the data file that lets a full disk still take
//! deletes (docs/operations.md, "A full disk").

use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::PoisonError;
use std::sync::atomic::{AtomicU8, Ordering};

use super::disk::DiskFaults;

/// How much new data the disk must take, in a file of its own, before a store that has
/// reopened its file after a failure reports ready with no commit of its own to show: redb
/// writes a small commit into space the file already has, so reopening proves little.
pub(crate) const SPACE_PROBE: usize = 1 << 20;

/// The space the store keeps in reserve beside its data file (`localsqs.reserve`), written at
/// start when the disk has room: when the disk fills up, the store removes it, so that redb
/// can open the file for writing again and deletes can be committed (`Mode::Reserve`).
pub(crate) const RESERVE: usize = 8 << 20;

/// The reserve file beside the data file at `path`.
pub(crate) fn reserve_path(path: &std::path::Path) -> PathBuf {
    path.with_file_name("localsqs.reserve")
}

/// Makes the reserve, unless it is there already; a reserve that cannot be made whole is
/// removed again (a part would only take space).
pub(crate) fn make_reserve(
    path: &std::path::Path,
    faults: Option<&DiskFaults>,
) -> std::io::Result<()> {
    use std::io::Write;
    let reserve = reserve_path(path);
    if std::fs::metadata(&reserve).is_ok_and(|m| m.len() == RESERVE as u64) {
        return Ok(());
    }
    if let Some(f) = faults {
        f.check()?;
    }
    let made = std::fs::File::create(&reserve).and_then(|mut f| {
        f.write_all(&vec![0u8; RESERVE])?;
        f.sync_all()
    });
    if made.is_err() {
        let _ = std::fs::remove_file(&reserve);
    }
    made
}

/// Removes the reserve; whether there was one.
pub(crate) fn spend_reserve(path: &std::path::Path) -> bool {
    let spent = std::fs::remove_file(reserve_path(path)).is_ok();
    if spent {
        tracing::warn!(
            "the disk is full: spent the reserve; deletes are served, other writes refused until the disk has space"
        );
    }
    spent
}

/// What the store can do now (docs/operations.md, "A full disk").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// Commits succeed.
    Ready = 0,
    /// The file was opened for writing again after a failure, with the reserve still there:
    /// requests are served, but `/health` says not ready until a commit has succeeded (or the
    /// disk has taken a test write of [`SPACE_PROBE`]).
    Unproven = 1,
    /// The disk is full, and the store spent its reserve ([`RESERVE`], a file beside the data
    /// file) to open the file for writing again, or found no room to make it: reads and what
    /// consumes messages are served (receives, visibility changes, deletes, purges,
    /// DeleteQueue, reset, the sweep of expired messages), sends and other writes are refused,
    /// so that the reserve serves those, until the disk has space again (the reserve can be
    /// made anew) and the store is `Ready`.
    Reserve = 2,
    /// The file cannot be written: memory holds its last committed state, read through a view
    /// that writes nothing (`disk::open_read_only`). Reads are served, writes refused.
    ReadOnly = 3,
    /// A commit failed and memory may hold changes the disk refused: nothing is served until
    /// memory is rebuilt from the file.
    Failed = 4,
}

/// The store's mode and the latest failure, shared by the writer and the engine. The mode is
/// one atomic, read by every request; the reason is locked only when the mode is not `Ready`.
#[derive(Debug)]
pub(crate) struct StoreHealth {
    mode: AtomicU8,
    reason: Mutex<String>,
}

impl Default for StoreHealth {
    fn default() -> Self {
        Self {
            mode: AtomicU8::new(Mode::Ready as u8),
            reason: Mutex::new(String::new()),
        }
    }
}

impl StoreHealth {
    /// What the store can do now.
    pub fn mode(&self) -> Mode {
        match self.mode.load(Ordering::Acquire) {
            0 => Mode::Ready,
            1 => Mode::Unproven,
            2 => Mode::Reserve,
            3 => Mode::ReadOnly,
            _ => Mode::Failed,
        }
    }

    /// The latest failure (empty once a commit has succeeded).
    pub fn reason(&self) -> String {
        self.reason
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Records why the store is failing (the mode is unchanged).
    pub fn set_reason(&self, reason: impl Into<String>) {
        *self.reason.lock().unwrap_or_else(PoisonError::into_inner) = reason.into();
    }

    /// Enters `mode`; the reason is set first, so whoever sees the mode finds its reason.
    pub fn set(&self, mode: Mode, reason: Option<String>) {
        if let Some(r) = reason {
            self.set_reason(r);
        } else if mode == Mode::Ready {
            self.set_reason(String::new());
        }
        self.mode.store(mode as u8, Ordering::Release);
    }
}
