//! Hand-built captures and a strict drain for the integration tests.
#![allow(dead_code)] // each test binary uses its own subset

use std::io::{self, Cursor, Read};

use vigil_capture::{CaptureError, PcapFile, Source};
use vigil_types::LinkType;

/// An owned copy of a `RawPacket`, so a whole capture can be collected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pkt {
    pub ts: i64,
    pub linktype: LinkType,
    pub data: Vec<u8>,
    pub orig_len: u32,
    pub iface: u32,
}

/// Reads a source to its end, checking the contract on the way: at most one
/// error, and `None` forever after the error or the end.
pub fn drain(src: &mut PcapFile) -> (Vec<Pkt>, Option<CaptureError>) {
    let mut pkts = Vec::new();
    loop {
        assert!(pkts.len() < 10_000_000, "source never ends");
        match src.next_packet() {
            Some(Ok(p)) => pkts.push(Pkt {
                ts: p.ts.as_nanos(),
                linktype: p.linktype,
                data: p.data.to_vec(),
                orig_len: p.orig_len,
                iface: p.iface,
            }),
            Some(Err(e)) => {
                for _ in 0..3 {
                    assert!(src.next_packet().is_none(), "a packet or error after the error");
                }
                return (pkts, Some(e));
            }
            None => {
                for _ in 0..3 {
                    assert!(src.next_packet().is_none(), "a packet or error after the end");
                }
                return (pkts, None);
            }
        }
    }
}

/// Opens `bytes` as a capture (which must succeed) and drains it.
pub fn read(bytes: &[u8]) -> (Vec<Pkt>, Option<CaptureError>) {
    let mut src =
        PcapFile::from_reader("test.pcap", Cursor::new(bytes.to_vec())).unwrap_or_else(|e| panic!("open failed: {e}"));
    drain(&mut src)
}

/// Like [`read`], but the capture must end cleanly.
pub fn read_ok(bytes: &[u8]) -> Vec<Pkt> {
    let (pkts, err) = read(bytes);
    if let Some(e) = err {
        panic!("unexpected error after {} packets: {e}", pkts.len());
    }
    pkts
}

pub fn open_err(bytes: &[u8]) -> CaptureError {
    match PcapFile::from_reader("test.pcap", Cursor::new(bytes.to_vec())) {
        Ok(src) => panic!("opened {src:?}"),
        Err(e) => e,
    }
}

/// A frame whose bytes say where they came from.
pub fn frame(tag: u8, len: usize) -> Vec<u8> {
    (0..len).map(|i| tag.wrapping_add(i as u8)).collect()
}

pub const SEC: i64 = 1_000_000_000;

/// Bytes in one byte order.
#[derive(Default)]
pub struct Bytes {
    pub be: bool,
    pub out: Vec<u8>,
}

impl Bytes {
    pub fn u16(&mut self, v: u16) -> &mut Self {
        let b = if self.be { v.to_be_bytes() } else { v.to_le_bytes() };
        self.out.extend_from_slice(&b);
        self
    }
    pub fn u32(&mut self, v: u32) -> &mut Self {
        let b = if self.be { v.to_be_bytes() } else { v.to_le_bytes() };
        self.out.extend_from_slice(&b);
        self
    }
    pub fn u64(&mut self, v: u64) -> &mut Self {
        let b = if self.be { v.to_be_bytes() } else { v.to_le_bytes() };
        self.out.extend_from_slice(&b);
        self
    }
    pub fn raw(&mut self, b: &[u8]) -> &mut Self {
        self.out.extend_from_slice(b);
        self
    }
    pub fn pad4(&mut self) -> &mut Self {
        while !self.out.len().is_multiple_of(4) {
            self.out.push(0);
        }
        self
    }
}

// ---- classic pcap ----

/// A classic pcap file under construction.
pub struct Pcap(pub Bytes);

impl Pcap {
    pub fn new(be: bool, nanos: bool, snaplen: u32, dlt: u32) -> Pcap {
        let magic = if nanos { 0xa1b2_3c4d } else { 0xa1b2_c3d4 };
        Pcap::with_magic(be, magic, snaplen, dlt)
    }

    pub fn with_magic(be: bool, magic: u32, snaplen: u32, dlt: u32) -> Pcap {
        let mut b = Bytes { be, out: Vec::new() };
        b.u32(magic).u16(2).u16(4).u32(0).u32(0).u32(snaplen).u32(dlt);
        Pcap(b)
    }

    /// A record with caplen = data.len().
    pub fn record(&mut self, secs: u32, frac: u32, data: &[u8], orig_len: u32) -> &mut Self {
        self.record_claiming(secs, frac, data.len() as u32, data, orig_len)
    }

    /// A record whose header claims `caplen` whatever `data` holds.
    pub fn record_claiming(&mut self, secs: u32, frac: u32, caplen: u32, data: &[u8], orig_len: u32) -> &mut Self {
        self.0.u32(secs).u32(frac).u32(caplen).u32(orig_len).raw(data);
        self
    }

    pub fn bytes(&self) -> Vec<u8> {
        self.0.out.clone()
    }
}

// ---- pcapng ----

pub const SHB: u32 = 0x0A0D_0D0A;
pub const IDB: u32 = 1;
pub const OPB: u32 = 2;
pub const SPB: u32 = 3;
pub const NRB: u32 = 4;
pub const ISB: u32 = 5;
pub const EPB: u32 = 6;
pub const DSB: u32 = 10;
pub const CUSTOM: u32 = 0xBAD;

pub const IF_TSRESOL: u16 = 9;
pub const IF_TSOFFSET: u16 = 14;

/// A pcapng file under construction; each section keeps its own byte order.
pub struct Ng {
    pub be: bool,
    pub out: Vec<u8>,
}

impl Ng {
    /// A file opening with a version 1.0 section in the given byte order.
    pub fn new(be: bool) -> Ng {
        let mut ng = Ng { be, out: Vec::new() };
        ng.section(be, 1);
        ng
    }

    fn bytes_(&self) -> Bytes {
        Bytes { be: self.be, out: Vec::new() }
    }

    /// A block of `kind` around `body` (padded to 4), with correct lengths.
    pub fn block(&mut self, kind: u32, body: &[u8]) -> &mut Self {
        let mut b = self.bytes_();
        b.raw(body).pad4();
        let len = b.out.len() as u32 + 12;
        let mut whole = self.bytes_();
        whole.u32(kind).u32(len).raw(&b.out).u32(len);
        self.out.extend_from_slice(&whole.out);
        self
    }

    pub fn section(&mut self, be: bool, major: u16) -> &mut Self {
        self.be = be;
        let mut body = self.bytes_();
        body.u32(0x1A2B_3C4D).u16(major).u16(0).u64(u64::MAX);
        let body = body.out;
        self.block(SHB, &body)
    }

    pub fn options(&self, options: &[(u16, &[u8])]) -> Vec<u8> {
        let mut b = self.bytes_();
        if options.is_empty() {
            return b.out;
        }
        for (code, value) in options {
            b.u16(*code).u16(value.len() as u16).raw(value).pad4();
        }
        b.u16(0).u16(0);
        b.out
    }

    pub fn interface(&mut self, dlt: u16, snaplen: u32, options: &[(u16, &[u8])]) -> &mut Self {
        let mut body = self.bytes_();
        body.u16(dlt).u16(0).u32(snaplen);
        let opts = self.options(options);
        body.raw(&opts);
        let body = body.out;
        self.block(IDB, &body)
    }

    /// if_tsoffset's value in this section's byte order.
    pub fn tsoffset(&self, secs: i64) -> Vec<u8> {
        let mut b = self.bytes_();
        b.u64(secs as u64);
        b.out
    }

    pub fn epb(&mut self, iface: u32, ts: u64, data: &[u8], orig_len: u32) -> &mut Self {
        self.epb_with(iface, ts, data.len() as u32, data, orig_len, &[])
    }

    pub fn epb_with(
        &mut self,
        iface: u32,
        ts: u64,
        caplen: u32,
        data: &[u8],
        orig_len: u32,
        options: &[(u16, &[u8])],
    ) -> &mut Self {
        let mut body = self.bytes_();
        body.u32(iface).u32((ts >> 32) as u32).u32(ts as u32).u32(caplen).u32(orig_len).raw(data).pad4();
        let opts = self.options(options);
        body.raw(&opts);
        let body = body.out;
        self.block(EPB, &body)
    }

    pub fn opb(&mut self, iface: u16, ts: u64, data: &[u8], orig_len: u32) -> &mut Self {
        let mut body = self.bytes_();
        body.u16(iface)
            .u16(7) // drops
            .u32((ts >> 32) as u32)
            .u32(ts as u32)
            .u32(data.len() as u32)
            .u32(orig_len)
            .raw(data);
        let body = body.out;
        self.block(OPB, &body)
    }

    pub fn spb(&mut self, data: &[u8], orig_len: u32) -> &mut Self {
        let mut body = self.bytes_();
        body.u32(orig_len).raw(data);
        let body = body.out;
        self.block(SPB, &body)
    }

    pub fn bytes(&self) -> Vec<u8> {
        self.out.clone()
    }
}

// ---- readers that misbehave ----

/// Hands out at most `chunk` bytes per read, and is interrupted every other call.
pub struct Trickle {
    pub inner: Cursor<Vec<u8>>,
    pub chunk: usize,
    pub interrupt: bool,
}

impl Read for Trickle {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.interrupt = !self.interrupt;
        if self.interrupt {
            return Err(io::Error::from(io::ErrorKind::Interrupted));
        }
        let n = buf.len().min(self.chunk);
        self.inner.read(&mut buf[..n])
    }
}

/// Serves `data`, then fails.
pub struct FailsAfter {
    pub inner: Cursor<Vec<u8>>,
}

impl Read for FailsAfter {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self.inner.read(buf)? {
            0 => Err(io::Error::other("disk on fire")),
            n => Ok(n),
        }
    }
}
