//! Engine layer, store: the data file's storage backend, with a switch that makes it behave like a
//! full disk, so that running out of space (and getting it back) can be tested without filling
//! a real disk.
//!
//! The backend is redb's own file backend; every call is passed through, except that while the
//! switch is on, writes, length changes and syncs fail with `StorageFull` ("No space left on
//! device"), as the kernel answers when a disk fills up.

use std::fs::{File, OpenOptions};
use std::io;
use std::ops::Bound;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use redb::backends::FileBackend;
use redb::{BackendError, Database, DatabaseError, StorageBackend};

/// A switch that makes the data file's writes fail as on a full disk (for tests).
#[derive(Debug, Default)]
pub struct DiskFaults {
    full: AtomicBool,
}

impl DiskFaults {
    /// A disk with space.
    #[must_use]
    pub fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    /// From now on, writes fail with "No space left on device".
    pub fn fill(&self) {
        self.full.store(true, Ordering::SeqCst);
    }

    /// Space is back.
    pub fn free(&self) {
        self.full.store(false, Ordering::SeqCst);
    }

    fn check(&self) -> io::Result<()> {
        if self.full.load(Ordering::SeqCst) {
            Err(io::Error::new(
                io::ErrorKind::StorageFull,
                "No space left on device (injected)",
            ))
        } else {
            Ok(())
        }
    }
}

#[derive(Debug)]
struct Backend {
    file: FileBackend,
    faults: Option<Arc<DiskFaults>>,
}

impl Backend {
    fn check(&self) -> io::Result<()> {
        self.faults.as_deref().map_or(Ok(()), DiskFaults::check)
    }
}

impl StorageBackend for Backend {
    fn len(&self) -> io::Result<u64> {
        self.file.len()
    }

    fn read(&self, offset: u64, out: &mut [u8]) -> io::Result<()> {
        self.file.read(offset, out)
    }

    fn set_len(&self, len: u64) -> io::Result<()> {
        self.check()?;
        self.file.set_len(len)
    }

    fn sync_data(&self) -> io::Result<()> {
        self.check()?;
        self.file.sync_data()
    }

    fn write(&self, offset: u64, data: &[u8]) -> io::Result<()> {
        self.check()?;
        self.file.write(offset, data)
    }

    fn close(&self) -> io::Result<()> {
        self.file.close()
    }

    fn try_lock_range(&self, start: Bound<u64>, end: Bound<u64>) -> Result<bool, BackendError> {
        self.file.try_lock_range(start, end)
    }

    fn try_lock_shared_range(
        &self,
        start: Bound<u64>,
        end: Bound<u64>,
    ) -> Result<bool, BackendError> {
        self.file.try_lock_shared_range(start, end)
    }

    fn lock_range(&self, start: Bound<u64>, end: Bound<u64>) -> Result<(), BackendError> {
        self.file.lock_range(start, end)
    }

    fn lock_shared_range(&self, start: Bound<u64>, end: Bound<u64>) -> Result<(), BackendError> {
        self.file.lock_shared_range(start, end)
    }

    fn unlock_range(&self, start: Bound<u64>, end: Bound<u64>) -> Result<(), BackendError> {
        self.file.unlock_range(start, end)
    }
}

/// Opens (or creates) the database file at `path`, through the switchable backend.
pub(super) fn open(
    path: &Path,
    cache_bytes: usize,
    faults: Option<Arc<DiskFaults>>,
) -> Result<Database, DatabaseError> {
    let file: File = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)?;
    Database::builder()
        .set_cache_size(cache_bytes)
        .create_with_backend(Backend {
            file: FileBackend::new(file)?,
            faults,
        })
}
