//! Suricata's hex dump of bytes in its text logs (alert-debug, tcp-data,
//! http-body-data).

use std::fmt::Write as _;

/// 16 bytes a line: offset, the bytes in hex (a gap after 8), the bytes
/// as text (`.` for what does not print).
pub(crate) fn hexdump(s: &mut String, data: &[u8]) {
    for (i, chunk) in data.chunks(16).enumerate() {
        let mut hex = String::with_capacity(49);
        let mut text = String::with_capacity(17);
        for (j, b) in chunk.iter().enumerate() {
            let _ = write!(hex, "{b:02X} ");
            text.push(if (0x20..0x7f).contains(b) { *b as char } else { '.' });
            // The gap after the eighth byte, there even when nothing follows.
            if j == 7 {
                hex.push(' ');
                text.push(' ');
            }
        }
        let _ = writeln!(s, " {:04X}  {hex:<49}  {text}", i * 16);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_lines_in_suricatas_layout() {
        let mut s = String::new();
        hexdump(&mut s, b"SSH-2.0-OpenSSH_for_Windows_7.7\r\n");
        let lines: Vec<&str> = s.lines().collect();
        assert_eq!(lines[0], " 0000  53 53 48 2D 32 2E 30 2D  4F 70 65 6E 53 53 48 5F   SSH-2.0- OpenSSH_");
        assert_eq!(lines[2], format!(" 0020  0A{}  .", " ".repeat(47)));
        assert_eq!(lines.len(), 3);
        let mut s = String::new();
        hexdump(&mut s, b"0123456789");
        assert_eq!(s, format!(" 0000  30 31 32 33 34 35 36 37  38 39 {}  01234567 89\n", " ".repeat(18)));
        let mut s = String::new();
        hexdump(&mut s, b"com/pub/");
        assert!(s.ends_with("  com/pub/ \n"), "{s:?}");
    }
}
