//! Creating the state dir and its private files.

use crate::error::StoreError;
use std::fs::{self, DirBuilder, File, OpenOptions};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::Path;

/// Create `dir` (and its parents) as 0700 if missing. An existing dir is left as is:
/// its owner chose its mode.
pub(crate) fn ensure_dir(dir: &Path) -> Result<(), StoreError> {
    if dir.is_dir() {
        return Ok(());
    }
    DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|e| StoreError::io("creating state dir", dir, e))
}

/// Open `path` for writing with `O_APPEND` (creating it 0600), refusing a symlink
/// planted at its name (std already opens with `O_CLOEXEC`).
pub(crate) fn open_append(path: &Path) -> Result<File, StoreError> {
    let file = OpenOptions::new()
        .append(true)
        .create(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
        .map_err(|e| StoreError::io("opening", path, e))?;
    tighten(&file, path)?;
    Ok(file)
}

/// Make an existing file readable by its owner only (it may predate us, or have
/// been loosened by hand).
fn tighten(file: &File, path: &Path) -> Result<(), StoreError> {
    let mode = file
        .metadata()
        .map_err(|e| StoreError::io("inspecting", path, e))?
        .permissions()
        .mode();
    if mode & 0o077 != 0 {
        file.set_permissions(fs::Permissions::from_mode(mode & 0o600))
            .map_err(|e| StoreError::io("restricting", path, e))?;
    }
    Ok(())
}

/// Create `path` 0600 if it does not exist (so SQLite, which gives its WAL and
/// shared-memory files the mode of the database, never makes them world-readable).
pub(crate) fn create_private(path: &Path) -> Result<(), StoreError> {
    match fs::symlink_metadata(path) {
        Ok(m) if !m.is_file() => Ok(()), // SQLite reports what it is.
        Ok(_) => {
            let file = OpenOptions::new()
                .read(true)
                .custom_flags(libc::O_NOFOLLOW)
                .open(path)
                .map_err(|e| StoreError::io("opening", path, e))?;
            tighten(&file, path)
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW)
            .open(path)
            .map(drop)
            .map_err(|e| StoreError::io("creating", path, e)),
        Err(e) => Err(StoreError::io("inspecting", path, e)),
    }
}
