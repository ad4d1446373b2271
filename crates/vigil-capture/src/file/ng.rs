//! pcapng files: a sequence of blocks, grouped into sections (each opened by a
//! Section Header Block that sets the byte order), whose Interface Description
//! Blocks give every interface its own link type and clock.
//!
//! pcap-parser decodes the section and interface headers (options included).
//! Packet blocks are decoded here from their fixed fields: pcap-parser's
//! packet parsers collect options into a `Vec`, which would allocate for every
//! packet of a file whose writer adds `epb_flags`, and we need none of them.

use pcap_parser::{
    parse_interfacedescriptionblock_be, parse_interfacedescriptionblock_le, parse_sectionheaderblock,
    InterfaceDescriptionBlock, OptionCode, BOM_MAGIC, EPB_MAGIC, IDB_MAGIC, ISB_MAGIC, NRB_MAGIC, SHB_MAGIC, SPB_MAGIC,
};
use vigil_types::{LinkType, Timestamp};

use super::window::{Window, MAX_RECORD};
use super::{u32_at, Found};
use crate::CaptureError;

/// The obsolete Packet Block, still written by old tools and still read by libpcap.
const OPB_MAGIC: u32 = 2;

/// Every block is at least type, length, and trailing length.
const MIN_BLOCK: usize = 12;

/// More interfaces than this in one section is damage; the cap keeps a file
/// of tiny IDBs from costing more memory than it is long.
const MAX_INTERFACES: usize = 65_536;

pub(crate) fn is_magic(head: [u8; 4]) -> bool {
    u32::from_le_bytes(head) == SHB_MAGIC
}

pub(crate) struct PcapNg {
    big_endian: bool,
    interfaces: Vec<Interface>,
    /// Simple Packet Blocks carry no time; they get the last packet's, so
    /// the pipeline clock does not jump back to 1970 and forward again.
    last_ts: Timestamp,
}

struct Interface {
    linktype: LinkType,
    snaplen: u32,
    resolution: Resolution,
    offset_secs: i64,
}

/// One framed block, complete in the window at its front.
struct Block {
    offset: u64,
    kind: u32,
    len: usize,
}

impl PcapNg {
    /// Reads and consumes the first Section Header Block. The caller has
    /// seen the magic, so the first block is a section header or damaged.
    pub(crate) fn start(w: &mut Window) -> Result<PcapNg, CaptureError> {
        let mut ng = PcapNg { big_endian: false, interfaces: Vec::new(), last_ts: Timestamp::default() };
        if let Some(block) = ng.frame(w)? {
            ng.section(w, &block)?;
            w.consume(block.len);
        }
        Ok(ng)
    }

    /// Reads blocks up to the next packet; `Ok(None)` when the file ends
    /// cleanly between blocks.
    pub(crate) fn next(&mut self, w: &mut Window) -> Result<Option<Found>, CaptureError> {
        // Every turn consumes a whole block of at least 12 bytes or returns,
        // so this ends with the file.
        while let Some(block) = self.frame(w)? {
            match block.kind {
                SHB_MAGIC => self.section(w, &block)?,
                IDB_MAGIC => self.interface(w, &block)?,
                EPB_MAGIC | OPB_MAGIC | SPB_MAGIC => return self.packet(w, &block).map(Some),
                // Name resolution, statistics, secrets, custom, unknown: not ours.
                _ => {}
            }
            w.consume(block.len);
        }
        Ok(None)
    }

    /// Checks the next block's framing and makes it whole in the window.
    fn frame(&self, w: &mut Window) -> Result<Option<Block>, CaptureError> {
        let offset = w.offset();
        if !w.fill(MIN_BLOCK)? {
            return match w.available() {
                0 => Ok(None),
                available => Err(CaptureError::Truncated {
                    path: w.path().to_path_buf(),
                    offset,
                    what: "pcapng block",
                    needed: MIN_BLOCK as u64,
                    available: available as u64,
                }),
            };
        }
        let head = w.data();
        // A section header announces its own byte order, whatever came before.
        let big_endian = if u32_at(head, 0, false) == SHB_MAGIC {
            match u32_at(head, 8, false) {
                BOM_MAGIC => false,
                bom if bom == BOM_MAGIC.swap_bytes() => true,
                bom => return Err(corrupt(w, offset, SHB_MAGIC, format!("unknown byte-order magic {bom:#010x}"))),
            }
        } else {
            self.big_endian
        };
        let kind = u32_at(head, 0, big_endian);
        let len = u32_at(head, 4, big_endian);
        if (len as usize) < MIN_BLOCK || !len.is_multiple_of(4) {
            let reason = format!("block length {len} is not a multiple of 4 of at least 12");
            return Err(corrupt(w, offset, kind, reason));
        }
        if len as usize > MAX_RECORD {
            return Err(CaptureError::TooLarge {
                path: w.path().to_path_buf(),
                offset,
                what: block_name(kind),
                len: u64::from(len),
                limit: MAX_RECORD as u64,
            });
        }
        let len = len as usize;
        if !w.fill(len)? {
            return Err(CaptureError::Truncated {
                path: w.path().to_path_buf(),
                offset,
                what: block_name(kind),
                needed: len as u64,
                available: w.available() as u64,
            });
        }
        let trailer = u32_at(w.data(), len - 4, big_endian);
        if trailer as usize != len {
            let reason = format!("trailing length {trailer} differs from leading length {len}");
            return Err(corrupt(w, offset, kind, reason));
        }
        Ok(Some(Block { offset, kind, len }))
    }

    fn section(&mut self, w: &Window, block: &Block) -> Result<(), CaptureError> {
        let record = block_bytes(w, block);
        let shb = match parse_sectionheaderblock(record) {
            Ok((_, shb)) => shb,
            Err(_) => return Err(malformed(w, block)),
        };
        if shb.major_version != 1 {
            return Err(CaptureError::Unsupported {
                path: w.path().to_path_buf(),
                offset: block.offset,
                what: format!("pcapng version {}.{}", shb.major_version, shb.minor_version),
            });
        }
        self.big_endian = shb.big_endian();
        self.interfaces.clear();
        Ok(())
    }

    fn interface(&mut self, w: &Window, block: &Block) -> Result<(), CaptureError> {
        if self.interfaces.len() >= MAX_INTERFACES {
            return Err(CaptureError::Unsupported {
                path: w.path().to_path_buf(),
                offset: block.offset,
                what: format!("section with more than {MAX_INTERFACES} interfaces"),
            });
        }
        let record = block_bytes(w, block);
        let parsed = if self.big_endian {
            parse_interfacedescriptionblock_be(record)
        } else {
            parse_interfacedescriptionblock_le(record)
        };
        let idb = match parsed {
            Ok((_, idb)) => idb,
            Err(_) => return Err(malformed(w, block)),
        };
        self.interfaces.push(Interface::new(&idb, self.big_endian));
        Ok(())
    }

    fn packet(&mut self, w: &Window, block: &Block) -> Result<Found, CaptureError> {
        let record = block_bytes(w, block);
        let be = self.big_endian;
        let body_end = block.len - 4;
        // EPB and OPB share a layout but for the interface id: OPB has a
        // 16-bit id followed by a drop count.
        let (iface, units, data_start, caplen, orig_len) = match block.kind {
            EPB_MAGIC | OPB_MAGIC => {
                const DATA_START: usize = 28;
                if body_end < DATA_START {
                    return Err(malformed(w, block));
                }
                let iface = match block.kind {
                    EPB_MAGIC => u32_at(record, 8, be),
                    _ if be => u32_at(record, 8, be) >> 16,
                    _ => u32_at(record, 8, be) & 0xffff,
                };
                let units = u64::from(u32_at(record, 12, be)) << 32 | u64::from(u32_at(record, 16, be));
                let caplen = u32_at(record, 20, be) as usize;
                let room = body_end - DATA_START;
                if caplen > room {
                    let reason = format!("captured length {caplen} overruns the block ({room} bytes of data)");
                    return Err(corrupt(w, block.offset, block.kind, reason));
                }
                (iface, Some(units), DATA_START, caplen, u32_at(record, 24, be))
            }
            _ => {
                const DATA_START: usize = 12;
                let orig_len = u32_at(record, 8, be);
                if body_end < DATA_START {
                    return Err(malformed(w, block));
                }
                // The captured length is implied: the original length, cut by
                // the block's room and by interface 0's snaplen.
                let mut caplen = (orig_len as usize).min(body_end - DATA_START);
                if let Some(snaplen) = self.interfaces.first().map(|i| i.snaplen as usize) {
                    if snaplen != 0 {
                        caplen = caplen.min(snaplen);
                    }
                }
                (0, None, DATA_START, caplen, orig_len)
            }
        };
        let Some(interface) = self.interfaces.get(iface as usize) else {
            let declared = self.interfaces.len();
            let reason = format!("packet on interface {iface}, but the section declares {declared} interface(s)");
            return Err(corrupt(w, block.offset, block.kind, reason));
        };
        let ts = match units {
            Some(units) => interface.timestamp(units),
            None => self.last_ts,
        };
        self.last_ts = ts;
        Ok(Found {
            ts,
            linktype: interface.linktype,
            orig_len,
            iface,
            data: data_start..data_start + caplen,
            record_len: block.len,
        })
    }
}

impl Interface {
    fn new(idb: &InterfaceDescriptionBlock<'_>, big_endian: bool) -> Interface {
        let mut resolution = Resolution::MICROS;
        let mut offset_secs = 0;
        // Malformed clock options are ignored (the defaults stand) rather than
        // fatal: a wrong clock is better than no packets.
        for option in &idb.options {
            let Ok(value) = option.as_bytes() else {
                continue;
            };
            match (option.code, value) {
                (OptionCode::IfTsresol, &[tsresol]) => resolution = Resolution::from_option(tsresol),
                (OptionCode::IfTsoffset, &[a, b, c, d, e, f, g, h]) => {
                    let bytes = [a, b, c, d, e, f, g, h];
                    offset_secs = match big_endian {
                        true => i64::from_be_bytes(bytes),
                        false => i64::from_le_bytes(bytes),
                    };
                }
                _ => {}
            }
        }
        Interface {
            linktype: LinkType::from_dlt(idb.linktype.0 as u32 & 0xffff),
            snaplen: idb.snaplen,
            resolution,
            offset_secs,
        }
    }

    fn timestamp(&self, units: u64) -> Timestamp {
        let nanos = self.resolution.to_nanos(units) + i128::from(self.offset_secs) * 1_000_000_000;
        // Only a hostile offset or resolution leaves i64's 584 years; such a
        // packet is pinned to the end of time rather than failing the file.
        let nanos = i64::try_from(nanos).unwrap_or(if nanos < 0 { i64::MIN } else { i64::MAX });
        Timestamp::from_nanos(nanos)
    }
}

/// An interface's clock tick (`if_tsresol`): 10^-n or 2^-n seconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Resolution {
    Decimal(u32),
    Binary(u32),
}

impl Resolution {
    const MICROS: Resolution = Resolution::Decimal(6);

    fn from_option(tsresol: u8) -> Resolution {
        match tsresol & 0x80 {
            0 => Resolution::Decimal(u32::from(tsresol)),
            _ => Resolution::Binary(u32::from(tsresol & 0x7f)),
        }
    }

    /// Converts a count of ticks to nanoseconds, truncating sub-nanosecond parts.
    fn to_nanos(self, units: u64) -> i128 {
        let units = u128::from(units);
        let nanos = match self {
            Resolution::Decimal(e) if e <= 9 => units * 10u128.pow(9 - e),
            Resolution::Decimal(e) => 10u128.checked_pow(e - 9).map_or(0, |tick| units / tick),
            // e < 128, and units * 10^9 < 2^94, so neither step overflows.
            Resolution::Binary(e) => (units * 1_000_000_000) >> e,
        };
        // At most 2^64 * 10^9 < 2^94: always fits.
        nanos as i128
    }
}

fn block_bytes<'w>(w: &'w Window, block: &Block) -> &'w [u8] {
    w.data().get(..block.len).unwrap_or_default()
}

fn block_name(kind: u32) -> &'static str {
    match kind {
        SHB_MAGIC => "section header block",
        IDB_MAGIC => "interface description block",
        EPB_MAGIC => "enhanced packet block",
        SPB_MAGIC => "simple packet block",
        OPB_MAGIC => "packet block",
        NRB_MAGIC => "name resolution block",
        ISB_MAGIC => "interface statistics block",
        _ => "pcapng block",
    }
}

fn corrupt(w: &Window, offset: u64, kind: u32, reason: String) -> CaptureError {
    CaptureError::Corrupt { path: w.path().to_path_buf(), offset, what: block_name(kind), reason }
}

fn malformed(w: &Window, block: &Block) -> CaptureError {
    let reason = format!("malformed body ({} bytes)", block.len);
    corrupt(w, block.offset, block.kind, reason)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimal_resolutions_convert_exactly() {
        assert_eq!(Resolution::from_option(6).to_nanos(1_500_001), 1_500_001_000);
        assert_eq!(Resolution::from_option(9).to_nanos(1_700_000_000_123_456_789), 1_700_000_000_123_456_789);
        assert_eq!(Resolution::from_option(0).to_nanos(3), 3_000_000_000);
        assert_eq!(Resolution::from_option(12).to_nanos(1_234_567), 1_234);
    }

    #[test]
    fn binary_resolutions_truncate_below_a_nanosecond() {
        // 2^-10 s ticks: 1024 of them make a second.
        assert_eq!(Resolution::from_option(0x80 | 10).to_nanos(1024), 1_000_000_000);
        assert_eq!(Resolution::from_option(0x80 | 10).to_nanos(1), 976_562);
        assert_eq!(Resolution::from_option(0x80).to_nanos(2), 2_000_000_000);
    }

    #[test]
    fn absurd_resolutions_do_not_overflow() {
        assert_eq!(Resolution::from_option(127).to_nanos(u64::MAX), 0);
        assert_eq!(Resolution::from_option(0xff).to_nanos(u64::MAX), 0);
        assert_eq!(Resolution::from_option(0).to_nanos(u64::MAX), u128::from(u64::MAX) as i128 * 1_000_000_000);
        let iface = Interface {
            linktype: LinkType::Ethernet,
            snaplen: 0,
            resolution: Resolution::from_option(0),
            offset_secs: i64::MAX,
        };
        assert_eq!(iface.timestamp(u64::MAX).as_nanos(), i64::MAX);
    }
}
