//! The protocols written against [`crate::proto`]: one folder each, listed
//! once below. Adding a protocol is its folder and one line here; the macro
//! declares the module and puts its `PROTO` definition in [`ALL`].

use crate::proto::ProtoDef;

macro_rules! protocols {
    ($($name:ident),* $(,)?) => {
        $(pub mod $name;)*
        /// Every protocol of the table, in probing order.
        pub static ALL: &[&ProtoDef] = &[$(&$name::PROTO),*];
    };
}

protocols! {
    ssh,
}
