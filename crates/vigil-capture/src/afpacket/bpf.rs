//! BPF capture filters (`-f`, `bpf-filter`): tcpdump expressions compiled by
//! the system's libpcap, loaded at run time so that building vigil does not
//! need it, then attached to the socket as a classic BPF program.

use std::ffi::{c_char, c_int, c_uint, c_void, CStr, CString};
use std::io;
use std::os::fd::OwnedFd;
use std::sync::Mutex;

/// One classic BPF instruction (`struct sock_filter`).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BpfInsn {
    pub code: u16,
    pub jt: u8,
    pub jf: u8,
    pub k: u32,
}

#[repr(C)]
struct BpfProgram {
    len: c_uint,
    insns: *mut BpfInsn,
}

#[repr(C)]
#[derive(Clone, Copy)]
struct SockFprog {
    len: u16,
    filter: *const BpfInsn,
}

/// libpcap's compiler keeps global state in older versions.
static COMPILER: Mutex<()> = Mutex::new(());

type OpenDead = unsafe extern "C" fn(c_int, c_int) -> *mut c_void;
type Compile = unsafe extern "C" fn(*mut c_void, *mut BpfProgram, *const c_char, c_int, u32) -> c_int;
type GetErr = unsafe extern "C" fn(*mut c_void) -> *const c_char;
type FreeCode = unsafe extern "C" fn(*mut BpfProgram);
type Close = unsafe extern "C" fn(*mut c_void);

/// Compiles a tcpdump filter expression for frames of link type `dlt`
/// (1 for Ethernet, 101 for raw IP).
pub fn compile_bpf(expr: &str, dlt: u32) -> Result<Vec<BpfInsn>, String> {
    let _guard = COMPILER.lock().unwrap_or_else(|p| p.into_inner());
    let lib = ["libpcap.so.1", "libpcap.so.0.8", "libpcap.so"]
        .iter()
        .find_map(|name| {
            let c = CString::new(*name).ok()?;
            // SAFETY: dlopen of a shared library by name; the handle is never closed,
            // so symbols taken from it stay valid.
            let h = unsafe { libc::dlopen(c.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
            (!h.is_null()).then_some(h)
        })
        .ok_or("a BPF filter needs libpcap at run time (Debian: apt install libpcap0.8)")?;
    let sym = |name: &CStr| {
        // SAFETY: looks a symbol up in the handle opened above.
        let p = unsafe { libc::dlsym(lib, name.as_ptr()) };
        if p.is_null() {
            Err(format!("libpcap has no {}", name.to_string_lossy()))
        } else {
            Ok(p)
        }
    };
    // SAFETY: the symbols are libpcap's, with these C signatures (pcap.h).
    let (open_dead, compile, geterr, freecode, close) = unsafe {
        (
            std::mem::transmute::<*mut c_void, OpenDead>(sym(c"pcap_open_dead")?),
            std::mem::transmute::<*mut c_void, Compile>(sym(c"pcap_compile")?),
            std::mem::transmute::<*mut c_void, GetErr>(sym(c"pcap_geterr")?),
            std::mem::transmute::<*mut c_void, FreeCode>(sym(c"pcap_freecode")?),
            std::mem::transmute::<*mut c_void, Close>(sym(c"pcap_close")?),
        )
    };
    let c_expr = CString::new(expr).map_err(|_| "the filter contains a NUL byte".to_string())?;
    // SAFETY: calls follow libpcap's contract: a dead handle compiles, the
    // program is copied out before it is freed, the handle is closed once.
    unsafe {
        let p = open_dead(dlt as c_int, 262_144);
        if p.is_null() {
            return Err("pcap_open_dead failed".into());
        }
        let mut prog = BpfProgram { len: 0, insns: std::ptr::null_mut() };
        let rc = compile(p, &mut prog, c_expr.as_ptr(), 1, 0xffff_ffff);
        if rc != 0 {
            let msg = CStr::from_ptr(geterr(p)).to_string_lossy().into_owned();
            close(p);
            return Err(format!("bad BPF filter {expr:?}: {msg}"));
        }
        let out = if prog.insns.is_null() {
            Vec::new()
        } else {
            std::slice::from_raw_parts(prog.insns, prog.len as usize).to_vec()
        };
        freecode(&mut prog);
        close(p);
        Ok(out)
    }
}

/// Attaches `prog` to the socket.
pub(crate) fn attach(fd: &OwnedFd, prog: &[BpfInsn]) -> io::Result<()> {
    let len =
        u16::try_from(prog.len()).map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "BPF program too long"))?;
    let fprog = SockFprog { len, filter: prog.as_ptr() };
    // The kernel copies the program during the call, so `prog` need not outlive it.
    super::sys::set_opt(fd, libc::SOL_SOCKET, libc::SO_ATTACH_FILTER, &fprog)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compiles_a_filter_when_libpcap_is_there() {
        match compile_bpf("tcp port 80", 1) {
            Ok(prog) => {
                assert!(!prog.is_empty());
                // The last instruction returns (accept or reject).
                assert_eq!(prog.last().unwrap().code & 0x07, 0x06);
            }
            Err(e) => {
                assert!(e.contains("libpcap"), "{e}");
                eprintln!("skipped: {e}");
            }
        }
        if let Err(e) = compile_bpf("tcp port", 1) {
            assert!(e.contains("libpcap") || e.contains("bad BPF filter"), "{e}");
        } else {
            panic!("a broken expression compiled");
        }
    }
}
