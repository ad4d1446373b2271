//! A TPACKET_V3 receive ring: blocks of frames the kernel fills and hands
//! over whole (when full, or when the block timeout passes), read in place.
//!
//! Ownership of a block moves through its `block_status` word: the kernel
//! sets `TP_STATUS_USER` when the block is ours to read, we write
//! `TP_STATUS_KERNEL` when done. Between the two, the kernel does not touch
//! the block, which is what makes reading its bytes through a shared slice
//! sound.

use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::ptr::NonNull;
use std::sync::atomic::{fence, Ordering};

/// The block header fields vigil reads (`struct tpacket_block_desc` with `tpacket_hdr_v1`).
const BLOCK_STATUS: usize = 8;
const BLOCK_NUM_PKTS: usize = 12;
const BLOCK_FIRST_PKT: usize = 16;

/// One frame's header fields (`struct tpacket3_hdr`), read from the block.
#[derive(Debug, Clone, Copy)]
pub(crate) struct FrameHeader {
    pub next_offset: u32,
    pub sec: u32,
    pub nsec: u32,
    pub snaplen: u32,
    pub len: u32,
    pub status: u32,
    pub mac: u16,
    pub vlan_tci: u16,
    pub vlan_tpid: u16,
    /// `sll_pkttype` of the `sockaddr_ll` after the header.
    pub pkttype: u8,
}

/// The mapped ring and where reading stands.
pub(crate) struct Ring {
    base: NonNull<u8>,
    len: usize,
    block_size: usize,
    blocks: usize,
    /// The block being read (ours while `left` > 0 or until released).
    cur: usize,
    /// Frames of the current block not read yet; `None`: the block is not ours.
    left: Option<u32>,
    /// Offset in the current block of the next frame.
    next: usize,
}

// SAFETY: the mapping belongs to this Ring alone (one socket, one reader);
// moving it to another thread moves the only reader with it.
unsafe impl Send for Ring {}

impl Ring {
    /// Maps the ring the kernel set up on `fd` with `block_size * blocks` bytes.
    pub(crate) fn map(fd: &OwnedFd, block_size: usize, blocks: usize, locked: bool) -> io::Result<Ring> {
        let len = block_size * blocks;
        let mut flags = libc::MAP_SHARED;
        if locked {
            flags |= libc::MAP_LOCKED;
        }
        // SAFETY: maps the packet ring of our own socket; the kernel checks the length.
        let p = unsafe {
            libc::mmap(std::ptr::null_mut(), len, libc::PROT_READ | libc::PROT_WRITE, flags, fd.as_raw_fd(), 0)
        };
        if p == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let base = NonNull::new(p.cast::<u8>()).ok_or_else(|| io::Error::other("mmap returned null"))?;
        Ok(Ring { base, len, block_size, blocks, cur: 0, left: None, next: 0 })
    }

    fn block(&self, i: usize) -> *mut u8 {
        // SAFETY: i < blocks, so the offset stays inside the mapping.
        unsafe { self.base.as_ptr().add(i * self.block_size) }
    }

    fn read_u32(&self, at: *const u8) -> u32 {
        // SAFETY: callers pass addresses inside the mapping; the kernel may
        // write the status word concurrently, hence the volatile read.
        unsafe { std::ptr::read_volatile(at.cast::<u32>()) }
    }

    /// Whether the current block has been handed to us, taking it if so.
    pub(crate) fn poll_block(&mut self) -> bool {
        if self.left.is_some() {
            return true;
        }
        let b = self.block(self.cur);
        // SAFETY: the status word is inside the block header.
        let status = self.read_u32(unsafe { b.add(BLOCK_STATUS) });
        if status & libc::TP_STATUS_USER == 0 {
            return false;
        }
        // What the kernel wrote before setting the status is visible from here.
        fence(Ordering::Acquire);
        // SAFETY: header words inside the block we now own.
        let (num, first) = unsafe { (self.read_u32(b.add(BLOCK_NUM_PKTS)), self.read_u32(b.add(BLOCK_FIRST_PKT))) };
        self.left = Some(num);
        self.next = first as usize;
        true
    }

    /// The header of the next frame of the current block, or `None` when
    /// the block is done (it is then given back and the ring moves on).
    pub(crate) fn peek(&mut self) -> Option<FrameHeader> {
        let left = self.left?;
        if left == 0 || self.next + size_of_hdr() > self.block_size {
            self.release();
            return None;
        }
        let b = self.block(self.cur);
        // SAFETY: `next` + the header size is within the block (checked above).
        let h = unsafe { b.add(self.next) };
        // SAFETY (both): offsets inside the 48-byte header, which fits the block.
        let word = |off: usize| self.read_u32(unsafe { h.add(off) });
        let half = |off: usize| unsafe { std::ptr::read_volatile(h.add(off).cast::<u16>()) };
        let hdr = FrameHeader {
            next_offset: word(0),
            sec: word(4),
            nsec: word(8),
            snaplen: word(12),
            len: word(16),
            status: word(20),
            mac: half(24),
            vlan_tci: word(32) as u16,
            vlan_tpid: half(36),
            // sockaddr_ll follows the 16-aligned header: family(2) protocol(2) ifindex(4) hatype(2) pkttype(1).
            // SAFETY: inside the frame slot the kernel reserved for this header.
            pkttype: unsafe { std::ptr::read_volatile(h.add(hdr_aligned() + 10)) },
        };
        // The kernel is trusted, but a frame reaching past its block would be
        // memory we do not own: such a frame ends the block instead.
        let fits =
            (self.next + hdr.mac as usize).checked_add(hdr.snaplen as usize).is_some_and(|e| e <= self.block_size);
        if !fits {
            self.release();
            return None;
        }
        Some(hdr)
    }

    /// The bytes of the frame `peek` just returned; reading moves past it.
    pub(crate) fn take(&mut self, hdr: &FrameHeader) -> &[u8] {
        let start = self.next + hdr.mac as usize;
        self.skip(hdr);
        // SAFETY: `peek` checked that [start, start + snaplen) is inside the
        // current block, which the kernel leaves alone until `release`; the
        // slice borrows `self`, so the block cannot be released while it lives.
        unsafe { std::slice::from_raw_parts(self.block(self.cur).add(start), hdr.snaplen as usize) }
    }

    /// Moves past the frame `peek` just returned.
    pub(crate) fn skip(&mut self, hdr: &FrameHeader) {
        let Some(left) = self.left else { return };
        self.left = Some(if hdr.next_offset == 0 { 0 } else { left.saturating_sub(1) });
        self.next += hdr.next_offset as usize;
    }

    /// Gives the current block back to the kernel and moves to the next.
    fn release(&mut self) {
        if self.left.take().is_none() {
            return;
        }
        // Our reads of the block happen before the kernel may refill it.
        fence(Ordering::Release);
        // SAFETY: the status word of a block we own.
        unsafe {
            std::ptr::write_volatile(self.block(self.cur).add(BLOCK_STATUS).cast::<u32>(), libc::TP_STATUS_KERNEL)
        };
        self.cur = (self.cur + 1) % self.blocks;
    }
}

impl Drop for Ring {
    fn drop(&mut self) {
        // SAFETY: unmaps exactly what `map` mapped; no slice outlives `self`.
        unsafe { libc::munmap(self.base.as_ptr().cast(), self.len) };
    }
}

/// `sizeof(struct tpacket3_hdr)`.
fn size_of_hdr() -> usize {
    std::mem::size_of::<libc::tpacket3_hdr>()
}

/// Where the `sockaddr_ll` starts: the header rounded up to 16 bytes.
fn hdr_aligned() -> usize {
    (size_of_hdr() + 15) & !15
}
