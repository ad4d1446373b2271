//! Ethernet II frames and 802.1Q / 802.1ad tags.

use crate::bytes::be16;
use crate::error::{need, WireError};

/// An Ethernet II header: destination and source MAC, EtherType.
#[derive(Debug, Clone, Copy)]
pub struct Ethernet<'a>(&'a [u8]);

impl<'a> Ethernet<'a> {
    pub const HEADER_LEN: usize = 14;

    #[inline]
    pub fn new_checked(buf: &'a [u8]) -> Result<Self, WireError> {
        need(buf, Self::HEADER_LEN)?;
        Ok(Ethernet(buf))
    }

    #[inline]
    pub fn dst(&self) -> [u8; 6] {
        self.0[0..6].try_into().unwrap_or_default()
    }

    #[inline]
    pub fn src(&self) -> [u8; 6] {
        self.0[6..12].try_into().unwrap_or_default()
    }

    #[inline]
    pub fn ethertype(&self) -> u16 {
        be16(self.0, 12)
    }

    #[inline]
    pub fn payload(&self) -> &'a [u8] {
        &self.0[Self::HEADER_LEN..]
    }
}

/// One 802.1Q (or 802.1ad) tag as it follows a TPID: TCI then the inner EtherType.
#[derive(Debug, Clone, Copy)]
pub struct VlanTag<'a>(&'a [u8]);

impl<'a> VlanTag<'a> {
    pub const HEADER_LEN: usize = 4;

    #[inline]
    pub fn new_checked(buf: &'a [u8]) -> Result<Self, WireError> {
        need(buf, Self::HEADER_LEN)?;
        Ok(VlanTag(buf))
    }

    #[inline]
    pub fn priority(&self) -> u8 {
        self.0[0] >> 5
    }

    /// The 12-bit VLAN identifier.
    #[inline]
    pub fn vid(&self) -> u16 {
        be16(self.0, 0) & 0x0fff
    }

    #[inline]
    pub fn ethertype(&self) -> u16 {
        be16(self.0, 2)
    }

    #[inline]
    pub fn payload(&self) -> &'a [u8] {
        &self.0[Self::HEADER_LEN..]
    }
}

/// Formats a MAC address the way EVE writes it (`00:11:22:aa:bb:cc`).
#[inline]
pub fn format_mac(mac: [u8; 6]) -> String {
    let mut s = String::with_capacity(17);
    for (i, b) in mac.iter().enumerate() {
        if i > 0 {
            s.push(':');
        }
        s.push_str(&format!("{b:02x}"));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    // dst 00:11:22:33:44:55, src 66:77:88:99:aa:bb, 802.1Q, vid 100 prio 5, IPv4
    const TAGGED: &[u8] = &[
        0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb, 0x81, 0x00, //
        0xa0, 0x64, 0x08, 0x00,
    ];

    #[test]
    fn tagged_frame() {
        let eth = Ethernet::new_checked(TAGGED).unwrap();
        assert_eq!(eth.ethertype(), crate::ethertype::VLAN);
        assert_eq!(format_mac(eth.src()), "66:77:88:99:aa:bb");
        let tag = VlanTag::new_checked(eth.payload()).unwrap();
        assert_eq!((tag.vid(), tag.priority(), tag.ethertype()), (100, 5, 0x0800));
        assert!(tag.payload().is_empty());
    }

    #[test]
    fn short_frame_is_refused() {
        assert_eq!(Ethernet::new_checked(&TAGGED[..13]).unwrap_err(), WireError::Truncated { need: 14, have: 13 });
    }
}
