//! Detection: from rules to alerts.
//!
//! So far this crate holds the two ends of matching: the multi-pattern
//! [`prefilter`], which finds in one scan which signatures' fast patterns
//! occur in a buffer, and [`inspect`], which verifies a candidate's payload
//! keywords with Suricata's semantics. Signature compilation joins them.
//!
//! ```
//! use vigil_detect::prefilter::{Algo, Pattern, Prefilter, Scratch};
//! let pf = Prefilter::build(&[Pattern::new(*b"evil", true), Pattern::new(*b"GET", false)], Algo::best()).unwrap();
//! let mut scratch = Scratch::default();
//! assert_eq!(pf.matches(&mut scratch, b"get /EVIL.php"), vec![0]);
//! ```

mod addrindex;
pub mod analysis;
pub mod compile;
pub mod datasets;
pub mod engine;
pub mod flowbits;
pub mod flowint;
pub mod host_state;
pub mod hostbits;
pub mod inspect;
pub mod iprep;
pub mod lua;
pub mod prefilter;
pub mod threshold;
pub mod transform;

pub use compile::{compile, compile_all, compile_all_in, DetectExecutor, Shared, Signature, Unsupported};
pub use engine::{AppInput, DetectEngine, DetectScratch, StreamInput, Traffic, TxInput};
pub use flowbits::{FlowBits, FlowDetect};
