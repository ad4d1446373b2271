//! The connection sequence's PDUs as RDP puts them on TCP (MS-RDPBCGR
//! 1.3.1.1): TPKT (RFC 1006) around X.224 (ISO 8073) connection request,
//! confirm and data TPDUs; the negotiation structures inside the first two;
//! and in the first data TPDUs the MCS Connect Initial and Connect Response
//! (T.125, BER), whose GCC user data (T.124, PER) hold the client's data
//! blocks. Fast-path PDUs, which carry no TPKT, are framed so they can be
//! passed over.

use crate::codecs::ber;

/// The shortest TPKT worth a look: its own header and an X.224 header of
/// the data kind (length indicator, code, end-of-TSDU).
pub const MIN_TPKT: usize = 7;

/// X.224 TPDU codes: the high nibble of the byte after the length indicator.
const X224_CR: u8 = 0xe0;
const X224_CC: u8 = 0xd0;
const X224_DT: u8 = 0xf0;

/// What the start of a direction's bytes holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Frame<'a> {
    /// A TPKT: its X.224 TPDU, and the bytes it takes.
    Tpkt(&'a [u8], usize),
    /// A fast-path PDU (no TPKT), to pass over, and the bytes it takes.
    FastPath(usize),
    /// So many more bytes are needed to know.
    NeedMore(usize),
    /// Neither framing.
    Bad,
}

/// Frames the PDU at the start of `data`.
pub fn next_frame(data: &[u8]) -> Frame<'_> {
    let Some(&first) = data.first() else { return Frame::NeedMore(1) };
    if first == 3 {
        let Some(h) = data.get(..4) else { return Frame::NeedMore(4 - data.len()) };
        let len = usize::from(u16::from_be_bytes([h[2], h[3]]));
        if h[1] != 0 || len < MIN_TPKT {
            return Frame::Bad;
        }
        return match data.get(4..len) {
            Some(tpdu) => Frame::Tpkt(tpdu, len),
            None => Frame::NeedMore(len - data.len()),
        };
    }
    // TS_FP_INPUT_PDU / TS_FP_UPDATE_PDU: action 0 in the low two bits, then
    // a one- or two-byte length covering the whole PDU.
    if first & 0x03 != 0 {
        return Frame::Bad;
    }
    let Some(&l1) = data.get(1) else { return Frame::NeedMore(1) };
    let (len, head) = if l1 & 0x80 == 0 {
        (usize::from(l1), 2)
    } else {
        let Some(&l2) = data.get(2) else { return Frame::NeedMore(1) };
        (usize::from(l1 & 0x7f) << 8 | usize::from(l2), 3)
    };
    if len < head {
        return Frame::Bad;
    }
    Frame::FastPath(len)
}

/// `RDP_NEG_REQ` flags and requested protocols.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NegRequest {
    pub flags: u8,
    pub protocols: u32,
}

/// The server's answer to the negotiation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NegAnswer {
    /// `RDP_NEG_RSP`: flags and the selected protocol.
    Response { flags: u8, protocol: u32 },
    /// `RDP_NEG_FAILURE`: the failure code.
    Failure(u32),
}

/// A TPDU of the connection sequence worth a transaction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Pdu {
    /// X.224 Connection Request: the `mstshash` cookie, the negotiation request.
    Request { cookie: Option<Vec<u8>>, negotiation: Option<NegRequest> },
    /// X.224 Connection Confirm: the negotiation's answer.
    Confirm(Option<NegAnswer>),
    /// MCS Connect Initial with the client's data blocks.
    ConnectRequest(ClientData),
    /// MCS Connect Response.
    ConnectResponse,
    /// Any other data TPDU (domain, channel and security PDUs).
    Other,
}

/// The client data blocks Suricata logs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClientData {
    pub core: Option<ClientCore>,
    /// `TS_UD_CS_NET` channel names.
    pub channels: Vec<String>,
}

/// `TS_UD_CS_CORE`: the fixed part, then the optional fields, each present
/// only when the block is long enough for it and all before it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClientCore {
    pub version: u32,
    pub desktop_width: u16,
    pub desktop_height: u16,
    pub color_depth: u16,
    pub keyboard_layout: u32,
    pub build: u32,
    pub client_name: String,
    pub keyboard_type: u32,
    pub keyboard_subtype: u32,
    pub function_keys: u32,
    pub ime: String,
    pub post_beta2_color_depth: Option<u16>,
    pub product_id: Option<u16>,
    pub serial_number: Option<u32>,
    pub high_color_depth: Option<u16>,
    pub early_capabilities: Option<u16>,
    pub dig_product_id: Option<String>,
    pub connection_type: Option<u8>,
    pub physical_width: Option<u32>,
    pub physical_height: Option<u32>,
    pub orientation: Option<u16>,
    pub desktop_scale: Option<u32>,
    pub device_scale: Option<u32>,
}

/// Reads the TPDU of one TPKT; `None`: not an X.224 TPDU this parser knows.
pub fn parse_tpdu(tpdu: &[u8]) -> Option<Pdu> {
    let (&li, rest) = tpdu.split_first()?;
    let li = usize::from(li);
    let header = rest.get(..li)?;
    let code = *header.first()? & 0xf0;
    match code {
        // Code, destination and source references, class: 6 bytes, then the variable part.
        X224_CR => {
            let var = header.get(6..)?;
            let (cookie, var) = cookie(var);
            Some(Pdu::Request { cookie, negotiation: neg_request(var) })
        }
        X224_CC => Some(Pdu::Confirm(neg_answer(header.get(6..)?))),
        X224_DT => Some(mcs(&rest[li..]).unwrap_or(Pdu::Other)),
        _ => Some(Pdu::Other),
    }
}

/// The `Cookie: mstshash=...\r\n` at the start of a request's variable
/// part, and what follows it. A routing token (`Cookie: msts=`) is passed
/// over the same way but logs nothing.
fn cookie(var: &[u8]) -> (Option<Vec<u8>>, &[u8]) {
    const PREFIX: &[u8] = b"Cookie: ";
    if !var.starts_with(PREFIX) {
        return (None, var);
    }
    let Some(end) = var.windows(2).position(|w| w == b"\r\n") else { return (None, &[]) };
    let value = var[PREFIX.len()..end].strip_prefix(b"mstshash=").map(<[u8]>::to_vec);
    (value, &var[end + 2..])
}

fn neg_request(var: &[u8]) -> Option<NegRequest> {
    let (ty, flags, value) = neg_struct(var)?;
    (ty == 1).then_some(NegRequest { flags, protocols: value })
}

fn neg_answer(var: &[u8]) -> Option<NegAnswer> {
    match neg_struct(var)? {
        (2, flags, protocol) => Some(NegAnswer::Response { flags, protocol }),
        (3, _, code) => Some(NegAnswer::Failure(code)),
        _ => None,
    }
}

/// Type, flags and the 32-bit value of an 8-byte negotiation structure.
fn neg_struct(var: &[u8]) -> Option<(u8, u8, u32)> {
    let s = var.get(..8)?;
    if u16::from_le_bytes([s[2], s[3]]) != 8 {
        return None;
    }
    Some((s[0], s[1], u32::from_le_bytes([s[4], s[5], s[6], s[7]])))
}

/// An MCS Connect Initial or Connect Response (BER application tags 101
/// and 102, written on two bytes as `7f 65` and `7f 66`).
fn mcs(data: &[u8]) -> Option<Pdu> {
    let (&[0x7f, tag], rest) = data.split_first_chunk::<2>()? else { return None };
    let (&first, rest) = rest.split_first()?;
    let (len, rest) = if first < 0x80 {
        (usize::from(first), rest)
    } else {
        let n = usize::from(first & 0x7f);
        let digits = rest.get(..n).filter(|_| (1..=3).contains(&n))?;
        (digits.iter().fold(0usize, |a, &b| a << 8 | usize::from(b)), &rest[n..])
    };
    let body = rest.get(..len)?;
    match tag {
        0x65 => {
            let mut r = ber::Reader::new(body);
            r.expect(ber::OCTET_STRING).ok()?; // calling domain selector
            r.expect(ber::OCTET_STRING).ok()?; // called domain selector
            r.expect(0x01).ok()?; // upward flag
            for _ in 0..3 {
                r.expect(ber::SEQUENCE).ok()?; // target, minimum, maximum parameters
            }
            let user_data = r.expect(ber::OCTET_STRING).ok()?;
            Some(Pdu::ConnectRequest(gcc_client_data(user_data).unwrap_or_default()))
        }
        0x66 => Some(Pdu::ConnectResponse),
        _ => None,
    }
}

/// The data blocks of a GCC Conference Create Request: they follow the
/// `Duca` H.221 key and a PER length.
fn gcc_client_data(user_data: &[u8]) -> Option<ClientData> {
    let key = user_data.windows(4).take(64).position(|w| w == b"Duca")?;
    let rest = &user_data[key + 4..];
    let (&l1, rest) = rest.split_first()?;
    let (len, rest) = if l1 & 0x80 == 0 {
        (usize::from(l1), rest)
    } else {
        let (&l2, rest) = rest.split_first()?;
        (usize::from(l1 & 0x3f) << 8 | usize::from(l2), rest)
    };
    let mut blocks = rest.get(..len).unwrap_or(rest);
    let mut out = ClientData::default();
    while let Some(h) = blocks.get(..4) {
        let ty = u16::from_le_bytes([h[0], h[1]]);
        let blen = usize::from(u16::from_le_bytes([h[2], h[3]]));
        let Some(block) = blocks.get(4..blen.max(4)) else { break };
        match ty {
            0xc001 => out.core = client_core(block),
            0xc003 => out.channels = channels(block),
            _ => {}
        }
        blocks = &blocks[blen.max(4)..];
        if blen < 4 {
            break;
        }
    }
    Some(out)
}

/// A little-endian field reader that answers `None` once the block ends.
struct Le<'a>(&'a [u8]);

impl<'a> Le<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let (head, rest) = (self.0.get(..n)?, self.0.get(n..)?);
        self.0 = rest;
        Some(head)
    }
    fn u8(&mut self) -> Option<u8> {
        self.take(1).map(|b| b[0])
    }
    fn u16(&mut self) -> Option<u16> {
        self.take(2).map(|b| u16::from_le_bytes([b[0], b[1]]))
    }
    fn u32(&mut self) -> Option<u32> {
        self.take(4).map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
    /// A fixed-size UTF-16LE field, up to its first NUL.
    fn utf16(&mut self, bytes: usize) -> Option<String> {
        let units: Vec<u16> = self.take(bytes)?.chunks_exact(2).map(|c| u16::from_le_bytes([c[0], c[1]])).collect();
        let end = units.iter().position(|&u| u == 0).unwrap_or(units.len());
        Some(String::from_utf16_lossy(&units[..end]))
    }
}

fn client_core(block: &[u8]) -> Option<ClientCore> {
    let mut r = Le(block);
    let mut c = ClientCore {
        version: r.u32()?,
        desktop_width: r.u16()?,
        desktop_height: r.u16()?,
        color_depth: r.u16()?,
        ..ClientCore::default()
    };
    r.u16()?; // SAS sequence
    c.keyboard_layout = r.u32()?;
    c.build = r.u32()?;
    c.client_name = r.utf16(32)?;
    c.keyboard_type = r.u32()?;
    c.keyboard_subtype = r.u32()?;
    c.function_keys = r.u32()?;
    c.ime = r.utf16(64)?;
    // The optional fields: each read only if all before it were.
    (|| {
        c.post_beta2_color_depth = Some(r.u16()?);
        c.product_id = Some(r.u16()?);
        c.serial_number = Some(r.u32()?);
        c.high_color_depth = Some(r.u16()?);
        r.u16()?; // supported color depths
        c.early_capabilities = Some(r.u16()?);
        c.dig_product_id = Some(r.utf16(64)?);
        c.connection_type = Some(r.u8()?);
        r.u8()?; // padding
        r.u32()?; // server selected protocol
        c.physical_width = Some(r.u32()?);
        c.physical_height = Some(r.u32()?);
        c.orientation = Some(r.u16()?);
        c.desktop_scale = Some(r.u32()?);
        c.device_scale = Some(r.u32()?);
        Some(())
    })();
    Some(c)
}

/// `CHANNEL_DEF` names: eight bytes of ANSI, NUL-padded, then 4 bytes of options.
fn channels(block: &[u8]) -> Vec<String> {
    let mut r = Le(block);
    let Some(count) = r.u32() else { return Vec::new() };
    let mut out = Vec::new();
    for _ in 0..count.min(31) {
        let Some(def) = r.take(12) else { break };
        let name = &def[..8];
        let end = name.iter().position(|&b| b == 0).unwrap_or(8);
        out.push(String::from_utf8_lossy(&name[..end]).into_owned());
    }
    out
}

/// The TLS Certificate handshake message's certificates (RFC 5246 7.4.2):
/// a 24-bit list length, then each DER certificate after a 24-bit length.
pub fn certificate_list(body: &[u8]) -> Vec<&[u8]> {
    let u24 = |b: &[u8]| usize::from(b[0]) << 16 | usize::from(b[1]) << 8 | usize::from(b[2]);
    let Some(head) = body.get(..3) else { return Vec::new() };
    let mut list = body.get(3..3 + u24(head)).unwrap_or(&body[3..]);
    let mut out = Vec::new();
    while let Some(h) = list.get(..3) {
        let Some(cert) = list.get(3..3 + u24(h)) else { break };
        out.push(cert);
        list = &list[3 + cert.len()..];
    }
    out
}

/// A certificate's serial number as Suricata writes it in `x509_serials`:
/// the number in lowercase hex, without leading zeros.
pub fn serial_hex(der: &[u8]) -> Option<String> {
    let tbs = ber::Reader::new(ber::Reader::new(der).expect(ber::SEQUENCE).ok()?).expect(ber::SEQUENCE).ok()?;
    let mut r = ber::Reader::new(tbs);
    let mut first = r.any().ok()?;
    if first.tag == 0xa0 {
        first = r.any().ok()?; // the explicit version
    }
    if first.tag != ber::INTEGER {
        return None;
    }
    let hex: String = first.value.iter().map(|b| format!("{b:02x}")).collect();
    let trimmed = hex.trim_start_matches('0');
    Some(if trimmed.is_empty() { "0".into() } else { trimmed.into() })
}
