//! Engine layer, store: the data file's storage backend, with a switch that makes it behave like a
//! full disk, so that running out of space (and getting it back) can be tested without filling
//! a real disk.
//!
//! The backend is redb's own file backend; every call is passed through, except that while the
//! switch is on, writes, length changes and syncs fail with `StorageFull` ("No space left on
//! device"), as the kernel answers when a disk fills up.
//!
//! A second backend, [`open_read_only`], serves a file that cannot be written (a full disk, a
//! read-only mount): it reads the file and keeps whatever redb writes (the header of an open,
//! the repair of a file a failed commit left unclean) in memory, never on disk. The store reads
//! its last committed state through it while writes are refused (`writer.rs`).

use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io;
use std::ops::Bound;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use redb::backends::FileBackend;
use redb::{BackendError, Database, DatabaseError, StorageBackend};

/// A switch that makes the data file's writes fail as on a full disk (for tests).
#[derive(Debug, Default)]
pub struct DiskFaults {
    full: AtomicBool,
    no_new_blocks: AtomicBool,
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

    /// From now on the disk has no free blocks, as a real full disk: writes within the space
    /// the data file already has succeed (and so redb can reopen the file and commit into its
    /// free pages), but growing it fails with "No space left on device", and so does any new
    /// file.
    pub fn fill_blocks(&self) {
        self.no_new_blocks.store(true, Ordering::SeqCst);
    }

    /// Space is back.
    pub fn free(&self) {
        self.full.store(false, Ordering::SeqCst);
        self.no_new_blocks.store(false, Ordering::SeqCst);
    }

    /// Fails as growing a file on a disk with no free blocks would.
    fn check_growth(&self, from: u64, to: u64) -> io::Result<()> {
        if to > from && self.no_new_blocks.load(Ordering::SeqCst) {
            return Err(full());
        }
        self.check_writes()
    }

    fn check_writes(&self) -> io::Result<()> {
        if self.full.load(Ordering::SeqCst) {
            Err(full())
        } else {
            Ok(())
        }
    }

    /// Fails as a new file's write on a full disk would, while either switch is on.
    pub(super) fn check(&self) -> io::Result<()> {
        if self.no_new_blocks.load(Ordering::SeqCst) {
            return Err(full());
        }
        self.check_writes()
    }
}

fn full() -> io::Error {
    io::Error::new(
        io::ErrorKind::StorageFull,
        "No space left on device (injected)",
    )
}

#[derive(Debug)]
struct Backend {
    file: FileBackend,
    faults: Option<Arc<DiskFaults>>,
}

impl Backend {
    fn check(&self, to: u64) -> io::Result<()> {
        match self.faults.as_deref() {
            None => Ok(()),
            Some(f) => f.check_growth(self.file.len()?, to),
        }
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
        self.check(len)?;
        self.file.set_len(len)
    }

    fn sync_data(&self) -> io::Result<()> {
        self.check(0)?;
        self.file.sync_data()
    }

    fn write(&self, offset: u64, data: &[u8]) -> io::Result<()> {
        self.check(offset + data.len() as u64)?;
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

/// The blocks [`Overlay`] keeps.
const BLOCK: u64 = 4096;

/// A read-only view of the data file for redb: reads come from the file, or from the blocks
/// redb wrote since, which stay in memory (a few header blocks: the store never commits
/// through it). No file locks: the writer opens the file for writing beside it, to find out
/// whether writes work again.
#[derive(Debug)]
struct Overlay {
    file: FileBackend,
    file_len: u64,
    len: AtomicU64,
    blocks: Mutex<BTreeMap<u64, Box<[u8]>>>,
}

impl Overlay {
    /// Block `n` as the file holds it (zeros past its end).
    fn file_block(&self, n: u64) -> io::Result<Box<[u8]>> {
        let mut block = vec![0u8; BLOCK as usize].into_boxed_slice();
        let start = n * BLOCK;
        let end = (start + BLOCK).min(self.file_len);
        if start < end {
            #[allow(clippy::cast_possible_truncation)]
            self.file
                .read(start, &mut block[..(end - start) as usize])?;
        }
        Ok(block)
    }
}

impl StorageBackend for Overlay {
    fn len(&self) -> io::Result<u64> {
        Ok(self.len.load(Ordering::SeqCst))
    }

    #[allow(clippy::cast_possible_truncation)]
    fn read(&self, offset: u64, out: &mut [u8]) -> io::Result<()> {
        let blocks = self.blocks.lock().unwrap_or_else(PoisonError::into_inner);
        let mut done = 0usize;
        while done < out.len() {
            let at = offset + done as u64;
            let (n, within) = (at / BLOCK, (at % BLOCK) as usize);
            let take = (BLOCK as usize - within).min(out.len() - done);
            let dst = &mut out[done..done + take];
            match blocks.get(&n) {
                Some(b) => dst.copy_from_slice(&b[within..within + take]),
                None => dst.copy_from_slice(&self.file_block(n)?[within..within + take]),
            }
            done += take;
        }
        Ok(())
    }

    fn set_len(&self, len: u64) -> io::Result<()> {
        self.len.store(len, Ordering::SeqCst);
        Ok(())
    }

    fn sync_data(&self) -> io::Result<()> {
        Ok(())
    }

    #[allow(clippy::cast_possible_truncation)]
    fn write(&self, offset: u64, data: &[u8]) -> io::Result<()> {
        let mut blocks = self.blocks.lock().unwrap_or_else(PoisonError::into_inner);
        let mut done = 0usize;
        while done < data.len() {
            let at = offset + done as u64;
            let (n, within) = (at / BLOCK, (at % BLOCK) as usize);
            let take = (BLOCK as usize - within).min(data.len() - done);
            let block = match blocks.entry(n) {
                std::collections::btree_map::Entry::Occupied(e) => e.into_mut(),
                std::collections::btree_map::Entry::Vacant(e) => e.insert(self.file_block(n)?),
            };
            block[within..within + take].copy_from_slice(&data[done..done + take]);
            done += take;
        }
        Ok(())
    }
}

/// Opens the database file at `path` for reading only, when it cannot be written: redb's
/// open and the repair of a file left unclean write to memory, never to the file.
pub(super) fn open_read_only(path: &Path, cache_bytes: usize) -> Result<Database, DatabaseError> {
    let file = File::open(path)?;
    let file_len = file.metadata()?.len();
    Database::builder()
        .set_cache_size(cache_bytes)
        .create_with_backend(Overlay {
            file: FileBackend::new(file)?,
            file_len,
            len: AtomicU64::new(file_len),
            blocks: Mutex::new(BTreeMap::new()),
        })
}

#[cfg(test)]
mod tests {
    use redb::{ReadableDatabase, TableDefinition};

    use super::*;

    const T: TableDefinition<u64, u64> = TableDefinition::new("t");

    /// A file a failed commit left unclean is read through the overlay as last committed, and
    /// the file is not changed by it, even though redb repairs and commits on open.
    #[test]
    fn the_read_only_view_reads_the_last_commit_and_writes_nothing() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("t.redb");
        let faults = DiskFaults::new();
        let db = open(&path, 1 << 20, Some(Arc::clone(&faults))).expect("opens");
        let txn = db.begin_write().expect("txn");
        txn.open_table(T)
            .expect("table")
            .insert(1, 10)
            .expect("insert");
        txn.commit().expect("commits");
        faults.fill();
        let txn = db.begin_write().expect("txn");
        txn.open_table(T)
            .expect("table")
            .insert(2, 20)
            .expect("insert");
        assert!(txn.commit().is_err(), "the disk is full");
        drop(db);
        let before = std::fs::read(&path).expect("reads");

        let view = open_read_only(&path, 1 << 20).expect("opens read-only");
        let txn = view.begin_read().expect("read txn");
        let t = txn.open_table(T).expect("table");
        assert_eq!(t.get(1).expect("get").map(|v| v.value()), Some(10));
        assert!(
            t.get(2).expect("get").is_none(),
            "the failed commit is not there"
        );
        drop((t, txn, view));
        assert!(
            std::fs::read(&path).expect("reads") == before,
            "the file is untouched"
        );
    }
}
