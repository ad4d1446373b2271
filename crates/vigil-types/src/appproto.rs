/// The application protocol a flow was found to speak.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum AppProto {
    /// Not (yet) known.
    #[default]
    Unknown,
    /// A protocol of the application layer's protocol table, by its name
    /// (the table is static: the name is its identity).
    Plugin(&'static str),
    /// Detection gave up: neither side looked like a known protocol.
    Failed,
}

impl AppProto {
    /// The name Suricata uses in rules (`alert http ...`) and EVE (`app_proto`).
    pub const fn name(self) -> &'static str {
        match self {
            AppProto::Unknown => "unknown",
            AppProto::Failed => "failed",
            AppProto::Plugin(name) => name,
        }
    }
}
