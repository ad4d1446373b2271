//! Decoders protocols share: what more than one protocol carries (MIME
//! multipart bodies in HTTP uploads and mail, and later ASN.1/BER,
//! base64, NTLMSSP) lives here once.

pub mod lines;
pub mod mime;
pub mod multipart;
