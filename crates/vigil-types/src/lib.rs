//! Small value types every stage of the vigil pipeline shares.
//!
//! Nothing here allocates or does I/O. Time inside the pipeline is always the
//! packet's own [`Timestamp`], never the wall clock, so a capture replays to the
//! same result every time.
//!
//! ```
//! use vigil_types::{Timestamp, LinkType};
//! let ts = Timestamp::from_micros(1_700_000_000, 250);
//! assert_eq!(ts.secs(), 1_700_000_000);
//! assert_eq!(ts.subsec_micros(), 250);
//! assert_eq!(LinkType::from_dlt(1), LinkType::Ethernet);
//! ```

mod appproto;
mod direction;
mod flowkey;
mod hosts;
mod linktype;
pub mod suricata_vars;
mod time;

pub use appproto::AppProto;
pub use direction::{Direction, PerDir};
pub use flowkey::{FlowKey, FLOW_KEY_VLANS};
pub use hosts::{in_block, HostTable};
pub use linktype::LinkType;
pub use time::{civil_from_days, days_from_civil, Timestamp};
