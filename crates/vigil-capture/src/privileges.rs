//! Running with no more privilege than needed: the capture is opened as
//! root, then the process becomes `--user`/`--group`; and logs are never
//! written as root into a directory anyone can write (where another user
//! could plant a symlink for root to write through).

use std::ffi::CString;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

/// Refuses a world-writable log directory for a process running as root.
pub fn check_log_dir(dir: &Path) -> Result<(), String> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Ok(());
    }
    let meta = std::fs::metadata(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    if meta.permissions().mode() & 0o002 != 0 {
        return Err(format!(
            "log directory {} is writable by every user: vigil will not write into it as root (use a directory of its own)",
            dir.display()
        ));
    }
    Ok(())
}

/// Becomes `group` and `user` (names or numbers), in that order, for the
/// whole process: the capture sockets stay open, new privileged calls fail.
pub fn drop_privileges(user: Option<&str>, group: Option<&str>) -> Result<(), String> {
    let fail = |what: &str| format!("cannot switch to {what}: {}", std::io::Error::last_os_error());
    let mut gid = None;
    let mut uid = None;
    if let Some(u) = user {
        let (id, primary) = lookup_user(u).ok_or_else(|| format!("no such user {u:?}"))?;
        uid = Some(id);
        gid = Some(primary);
    }
    if let Some(g) = group {
        gid = Some(lookup_group(g).ok_or_else(|| format!("no such group {g:?}"))?);
    }
    if let Some(g) = gid {
        // SAFETY: plain credential calls; on failure nothing has changed yet for this step.
        unsafe {
            if libc::setgroups(1, &g) != 0 || libc::setgid(g) != 0 {
                return Err(fail("group"));
            }
        }
    }
    if let Some(u) = uid {
        // SAFETY: as above; after setuid the process can no longer regain root.
        if unsafe { libc::setuid(u) } != 0 {
            return Err(fail("user"));
        }
    }
    Ok(())
}

fn lookup_user(name: &str) -> Option<(libc::uid_t, libc::gid_t)> {
    let c = CString::new(name).ok()?;
    // SAFETY: getpwnam returns a pointer into static storage or null; we copy the ids out at once.
    let pw = unsafe { libc::getpwnam(c.as_ptr()) };
    if pw.is_null() {
        let id: libc::uid_t = name.parse().ok()?;
        return Some((id, id));
    }
    // SAFETY: non-null, points to a valid passwd record.
    unsafe { Some(((*pw).pw_uid, (*pw).pw_gid)) }
}

fn lookup_group(name: &str) -> Option<libc::gid_t> {
    let c = CString::new(name).ok()?;
    // SAFETY: as for getpwnam.
    let gr = unsafe { libc::getgrnam(c.as_ptr()) };
    if gr.is_null() {
        return name.parse().ok();
    }
    // SAFETY: non-null, points to a valid group record.
    unsafe { Some((*gr).gr_gid) }
}
