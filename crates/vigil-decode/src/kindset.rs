/// A set of option kinds (0-255) as a 256-bit mask: finding duplicate TCP or
/// IPv4 options without clearing a 256-entry table for every packet.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct KindSet([u64; 4]);

impl KindSet {
    /// Adds `kind`; false when it was already there.
    #[inline]
    pub(crate) fn insert(&mut self, kind: u8) -> bool {
        let (word, bit) = ((kind >> 6) as usize, 1u64 << (kind & 63));
        let fresh = self.0[word] & bit == 0;
        self.0[word] |= bit;
        fresh
    }
}
