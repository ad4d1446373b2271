//! Detection: from rules to alerts.
//!
//! So far this crate holds the multi-pattern [`prefilter`]: the first stage
//! of matching, which finds in one scan which signatures' fast patterns occur
//! in a buffer. Signature compilation and verification build on it.
//!
//! ```
//! use vigil_detect::prefilter::{Algo, Pattern, Prefilter, Scratch};
//! let pf = Prefilter::build(&[Pattern::new(*b"evil", true), Pattern::new(*b"GET", false)], Algo::best()).unwrap();
//! let mut scratch = Scratch::default();
//! assert_eq!(pf.matches(&mut scratch, b"get /EVIL.php"), vec![0]);
//! ```

pub mod prefilter;
