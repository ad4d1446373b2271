//! Hyperscan's literal API (`hs_compile_lit_multi`, block mode,
//! SINGLEMATCH) through the system library.
//!
//! This is one of the two places vigil uses `unsafe` (the other is live
//! capture): the FFI calls below. Each is sound for the reason given beside
//! it, and nothing unsafe leaves this file.

use super::{Pattern, PrefilterError};
use hyperscan_sys as hs;
use std::ffi::CStr;
use std::os::raw::{c_int, c_uint, c_ulonglong, c_void};
use std::ptr;
use std::sync::atomic::{AtomicU64, Ordering};

/// A compiled database. Immutable after compilation, so shareable across threads.
pub(super) struct HsMatcher {
    db: *mut hs::hs_database_t,
    /// Identifies the database, so a scratch knows whether it was sized for it.
    serial: u64,
    /// Longest pattern: the overlap when a buffer over 4 GiB is scanned in pieces.
    max_len: usize,
}

// SAFETY: Hyperscan documents a compiled database as read-only and usable
// from any number of threads at once; all mutable scan state is in scratch.
unsafe impl Send for HsMatcher {}
unsafe impl Sync for HsMatcher {}

/// A worker's scratch space, grown to fit every database it has scanned with.
pub(super) struct HsScratch {
    scratch: *mut hs::hs_scratch_t,
    sized_for: Vec<u64>,
}

impl Default for HsScratch {
    fn default() -> Self {
        HsScratch { scratch: ptr::null_mut(), sized_for: Vec::new() }
    }
}

// SAFETY: a scratch may move between threads; it is only ever used by one at
// a time, which `&mut` access guarantees.
unsafe impl Send for HsScratch {}

static SERIAL: AtomicU64 = AtomicU64::new(1);

impl HsMatcher {
    pub(super) fn build(patterns: &[Pattern]) -> Result<Self, PrefilterError> {
        let flags: Vec<c_uint> = patterns
            .iter()
            .map(|p| hs::HS_FLAG_SINGLEMATCH | if p.nocase { hs::HS_FLAG_CASELESS } else { 0 })
            .collect();
        let ids: Vec<c_uint> = (0..patterns.len() as c_uint).collect();
        let lens: Vec<usize> = patterns.iter().map(|p| p.bytes.len()).collect();
        let exprs: Vec<*const std::os::raw::c_char> = patterns.iter().map(|p| p.bytes.as_ptr().cast()).collect();
        let mut db = ptr::null_mut();
        let mut err = ptr::null_mut();
        // SAFETY: the four arrays have `patterns.len()` elements and outlive
        // the call; the literal API reads each expression by its length, so no
        // NUL terminator is needed; `db`/`err` are valid out-pointers.
        let rc = unsafe {
            hs::hs_compile_lit_multi(
                exprs.as_ptr(),
                flags.as_ptr(),
                ids.as_ptr(),
                lens.as_ptr(),
                patterns.len() as c_uint,
                hs::HS_MODE_BLOCK,
                ptr::null(),
                &mut db,
                &mut err,
            )
        };
        if rc != hs::HS_SUCCESS as c_int {
            let msg = if err.is_null() {
                format!("hs_compile_lit_multi returned {rc}")
            } else {
                // SAFETY: on failure Hyperscan returns a valid error whose
                // message is a NUL-terminated string; we free it once.
                unsafe {
                    let m = CStr::from_ptr((*err).message).to_string_lossy().into_owned();
                    hs::hs_free_compile_error(err);
                    m
                }
            };
            return Err(PrefilterError::Compile(msg));
        }
        let max_len = patterns.iter().map(|p| p.bytes.len()).max().unwrap_or(1);
        Ok(HsMatcher { db, serial: SERIAL.fetch_add(1, Ordering::Relaxed), max_len })
    }

    fn prepare(&self, s: &mut HsScratch) {
        if s.sized_for.contains(&self.serial) {
            return;
        }
        // SAFETY: `db` is a live database; `s.scratch` is null or a scratch
        // from an earlier call, which hs_alloc_scratch grows in place.
        let rc = unsafe { hs::hs_alloc_scratch(self.db, &mut s.scratch) };
        assert_eq!(rc, hs::HS_SUCCESS as c_int, "hs_alloc_scratch failed: out of memory");
        s.sized_for.push(self.serial);
    }

    pub(super) fn scan(&self, s: &mut HsScratch, hay: &[u8], on_match: &mut dyn FnMut(u32)) {
        self.prepare(s);
        // Hyperscan takes a 32-bit length; larger buffers go in overlapping
        // pieces, with a pattern reported once across pieces.
        const PIECE: usize = u32::MAX as usize;
        if hay.len() <= PIECE {
            self.scan_piece(s, hay, on_match);
            return;
        }
        let mut seen = std::collections::HashSet::new();
        let mut start = 0;
        while start < hay.len() {
            let end = (start + PIECE).min(hay.len());
            self.scan_piece(s, &hay[start..end], &mut |id| {
                if seen.insert(id) {
                    on_match(id)
                }
            });
            if end == hay.len() {
                break;
            }
            start = end + 1 - self.max_len;
        }
    }

    fn scan_piece(&self, s: &mut HsScratch, hay: &[u8], on_match: &mut dyn FnMut(u32)) {
        let mut ctx: &mut dyn FnMut(u32) = on_match;
        // SAFETY: `db` is live and `scratch` was sized for it (prepare); the
        // data pointer and length describe `hay`; `ctx` points at a fat
        // pointer on this stack frame that outlives the call and is only used
        // by `on_event` during it.
        unsafe {
            hs::hs_scan(
                self.db,
                hay.as_ptr().cast(),
                hay.len() as c_uint,
                0,
                s.scratch,
                Some(on_event),
                (&mut ctx as *mut &mut dyn FnMut(u32)).cast(),
            );
        }
    }
}

unsafe extern "C" fn on_event(
    id: c_uint,
    _from: c_ulonglong,
    _to: c_ulonglong,
    _flags: c_uint,
    ctx: *mut c_void,
) -> c_int {
    // SAFETY: `ctx` is the `&mut dyn FnMut(u32)` that scan_piece passed in,
    // alive for the whole hs_scan call this callback runs within.
    let f = unsafe { &mut *ctx.cast::<&mut dyn FnMut(u32)>() };
    f(id);
    0
}

impl Drop for HsMatcher {
    fn drop(&mut self) {
        // SAFETY: `db` came from hs_compile_lit_multi and is freed once.
        unsafe { hs::hs_free_database(self.db) };
    }
}

impl Drop for HsScratch {
    fn drop(&mut self) {
        if !self.scratch.is_null() {
            // SAFETY: the scratch came from hs_alloc_scratch and is freed once.
            unsafe { hs::hs_free_scratch(self.scratch) };
        }
    }
}
