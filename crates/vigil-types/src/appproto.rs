/// The application protocol a flow was found to speak.
#[derive(Debug, Clone, Copy, Eq, Default)]
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

/// Names come from one static table, so the same protocol is almost always
/// the same pointer: detection compares protocols per candidate signature,
/// and a pointer test saves the string compare. Equal text is still equal.
impl PartialEq for AppProto {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (AppProto::Plugin(a), AppProto::Plugin(b)) => std::ptr::eq(*a, *b) || a == b,
            (AppProto::Unknown, AppProto::Unknown) | (AppProto::Failed, AppProto::Failed) => true,
            _ => false,
        }
    }
}

/// By name, as equality is by name.
impl std::hash::Hash for AppProto {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        std::mem::discriminant(self).hash(state);
        if let AppProto::Plugin(name) = self {
            name.hash(state);
        }
    }
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

#[cfg(test)]
mod tests {
    use super::AppProto;

    #[test]
    fn equal_names_are_equal_protocols_wherever_they_live() {
        let owned = String::from("http");
        let elsewhere: &'static str = Box::leak(owned.into_boxed_str());
        assert_eq!(AppProto::Plugin("http"), AppProto::Plugin(elsewhere));
        assert_ne!(AppProto::Plugin("dns"), AppProto::Plugin("tls"));
        assert_ne!(AppProto::Plugin("failed"), AppProto::Failed);
        assert_eq!(AppProto::Unknown, AppProto::default());
    }
}
