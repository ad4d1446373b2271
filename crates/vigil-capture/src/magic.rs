//! File type descriptions by the system's libmagic, as Suricata's
//! `filemagic` and fileinfo `magic` use them: loaded at run time, so that
//! building vigil does not need it, and used only where rules or the
//! configuration ask. It lives in this crate because loading a system
//! library is `unsafe`, and this is the crate that may hold that (behind a
//! safe API), as it does for libpcap's filter compiler.
//!
//! A libmagic handle is not safe to share between threads, so each thread
//! opens its own the first time it asks, with the database that
//! [`set_database`] named (libmagic's default when none).

use std::cell::RefCell;
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::sync::OnceLock;

type Open = unsafe extern "C" fn(c_int) -> *mut c_void;
type Load = unsafe extern "C" fn(*mut c_void, *const c_char) -> c_int;
type Buffer = unsafe extern "C" fn(*mut c_void, *const c_void, usize) -> *const c_char;
type Error = unsafe extern "C" fn(*mut c_void) -> *const c_char;

/// libmagic's entry points, once found.
struct Lib {
    open: Open,
    load: Load,
    buffer: Buffer,
    error: Error,
}

/// The library, or why it is not there.
static LIB: OnceLock<Result<Lib, String>> = OnceLock::new();
/// The database every thread loads (`magic-file`); `None`: libmagic's default.
static DATABASE: OnceLock<Option<CString>> = OnceLock::new();

/// `MAGIC_NONE`: a textual description, as `file` prints it.
const MAGIC_NONE: c_int = 0;

fn lib() -> Result<&'static Lib, &'static str> {
    LIB.get_or_init(load_lib).as_ref().map_err(String::as_str)
}

fn load_lib() -> Result<Lib, String> {
    let handle = ["libmagic.so.1", "libmagic.so"]
        .iter()
        .find_map(|name| {
            let c = CString::new(*name).ok()?;
            // SAFETY: dlopen of a shared library by name; the handle is never
            // closed, so symbols taken from it stay valid for the process.
            let h = unsafe { libc::dlopen(c.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
            (!h.is_null()).then_some(h)
        })
        .ok_or("file magic needs libmagic at run time (Debian: apt install libmagic1)")?;
    let sym = |name: &CStr| {
        // SAFETY: looks a symbol up in the handle opened above.
        let p = unsafe { libc::dlsym(handle, name.as_ptr()) };
        if p.is_null() {
            Err(format!("libmagic has no {}", name.to_string_lossy()))
        } else {
            Ok(p)
        }
    };
    // SAFETY: the symbols are libmagic's, with these C signatures (magic.h).
    unsafe {
        Ok(Lib {
            open: std::mem::transmute::<*mut c_void, Open>(sym(c"magic_open")?),
            load: std::mem::transmute::<*mut c_void, Load>(sym(c"magic_load")?),
            buffer: std::mem::transmute::<*mut c_void, Buffer>(sym(c"magic_buffer")?),
            error: std::mem::transmute::<*mut c_void, Error>(sym(c"magic_error")?),
        })
    }
}

/// One thread's loaded libmagic handle. It is never closed: a worker keeps
/// it for its life, and the process ends with it.
struct Cookie(*mut c_void);

thread_local! {
    static COOKIE: RefCell<Option<Result<Cookie, String>>> = const { RefCell::new(None) };
}

fn open_cookie(lib: &Lib) -> Result<Cookie, String> {
    let db = DATABASE.get().and_then(Option::as_ref);
    // SAFETY: magic_open returns a handle or null; magic_load reads the
    // database named by a NUL-terminated path (or the default for null).
    unsafe {
        let cookie = (lib.open)(MAGIC_NONE);
        if cookie.is_null() {
            return Err("magic_open failed".into());
        }
        if (lib.load)(cookie, db.map_or(std::ptr::null(), |c| c.as_ptr())) != 0 {
            let err = (lib.error)(cookie);
            let msg = if err.is_null() { "unknown error".into() } else { CStr::from_ptr(err).to_string_lossy() };
            return Err(format!("libmagic could not load its database: {msg}"));
        }
        Ok(Cookie(cookie))
    }
}

/// Names the magic database to load (`magic-file`), before any lookup.
/// False when lookups already started with another one.
pub fn set_database(path: Option<&str>) -> bool {
    let c = path.and_then(|p| CString::new(p).ok());
    let same = c.clone();
    DATABASE.set(c).is_ok() || DATABASE.get().is_some_and(|d| *d == same)
}

/// Whether libmagic can be used here: the library loads and its database
/// opens. The reason when not.
pub fn magic_available() -> Result<(), String> {
    let lib = lib().map_err(str::to_string)?;
    COOKIE.with(|c| {
        let mut c = c.borrow_mut();
        match c.get_or_insert_with(|| open_cookie(lib)) {
            Ok(_) => Ok(()),
            Err(e) => Err(e.clone()),
        }
    })
}

/// libmagic's description of `data` (the first bytes of a file), as `file`
/// prints it; `None` where libmagic is not available.
pub fn describe(data: &[u8]) -> Option<String> {
    let lib = lib().ok()?;
    COOKIE.with(|c| {
        let mut c = c.borrow_mut();
        let Ok(cookie) = c.get_or_insert_with(|| open_cookie(lib)) else { return None };
        // SAFETY: the handle is this thread's own and loaded; libmagic reads
        // `len` bytes from `data` and returns a string it owns until the next
        // call on the handle, copied out before that.
        unsafe {
            let out = (lib.buffer)(cookie.0, data.as_ptr().cast(), data.len());
            (!out.is_null()).then(|| CStr::from_ptr(out).to_string_lossy().into_owned())
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pdf_is_described_as_one_where_libmagic_is() {
        if let Err(why) = magic_available() {
            eprintln!("skipped: {why}");
            return;
        }
        let pdf = b"%PDF-1.6\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<< /Type /Catalog >>\nendobj\n";
        let d = describe(pdf).expect("a description");
        assert!(d.starts_with("PDF document"), "{d}");
        // Each thread has its own handle.
        let other = std::thread::spawn(|| describe(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x10\0\0\0\x10\x08\x02\0\0\0"));
        assert!(other.join().unwrap().expect("a description").starts_with("PNG image data"));
    }
}
