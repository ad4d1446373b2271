//! The `tls-store` output: the certificate chains `tls.store` rules ask
//! for, each written as a PEM file with a `.meta` file describing it, as
//! Suricata names and writes them (`<secs>.<usecs>-<n>.pem`, `client-`
//! before a client's chain; `n` counts the chains the run stored).

use crate::error::EngineError;
use crate::log::log_path;
use crate::setup::Setup;
use std::io::Write;
use std::net::IpAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use vigil_applayer::tls::CertChain;
use vigil_decode::Packet;

/// Where chains go, and the run's count of them (all workers).
#[derive(Clone)]
pub(crate) struct TlsStore {
    dir: PathBuf,
    stored: Arc<AtomicU64>,
}

/// The flow a chain came on, oriented client to server.
pub(crate) struct StoreFlow {
    pub src: (IpAddr, u16),
    pub dst: (IpAddr, u16),
    pub proto: u8,
}

impl TlsStore {
    /// `None` unless `- tls-store:` is enabled; its directory is made now.
    pub(crate) fn open(setup: &Setup) -> Result<Option<TlsStore>, EngineError> {
        let Some(conf) = &setup.config.outputs.tls_store else { return Ok(None) };
        let dir = conf.certs_log_dir.as_deref().map_or_else(|| setup.log_dir.clone(), |d| log_path(&setup.log_dir, d));
        std::fs::create_dir_all(&dir)
            .map_err(|error| EngineError::Output { path: dir.display().to_string(), error })?;
        Ok(Some(TlsStore { dir, stored: Arc::new(AtomicU64::new(0)) }))
    }

    /// Writes `chain` (leaf first) and its description, at packet `p`.
    pub(crate) fn store(
        &self,
        chain: &CertChain,
        client: bool,
        p: &Packet<'_>,
        flow: &StoreFlow,
    ) -> std::io::Result<()> {
        let n = self.stored.fetch_add(1, Ordering::Relaxed) + 1;
        let base = format!("{}{}.{:06}-{n}", if client { "client-" } else { "" }, p.ts.secs(), p.ts.subsec_micros());
        let mut pem = String::new();
        for der in &chain.certs {
            pem.push_str("-----BEGIN CERTIFICATE-----\n");
            let b64 = vigil_applayer::tls::base64(der);
            for line in b64.as_bytes().chunks(64) {
                pem.push_str(&String::from_utf8_lossy(line));
                pem.push('\n');
            }
            pem.push_str("-----END CERTIFICATE-----\n");
        }
        std::fs::write(self.dir.join(format!("{base}.pem")), pem)?;
        let mut meta = Vec::new();
        let ip = vigil_output::ip_text;
        writeln!(meta, "TIME:              {}", p.ts.legacy())?;
        writeln!(meta, "PCAP PKT NUM:      {}", p.pcap_cnt)?;
        writeln!(meta, "SRC IP:            {}", ip(flow.src.0))?;
        writeln!(meta, "DST IP:            {}", ip(flow.dst.0))?;
        writeln!(meta, "PROTO:             {}", flow.proto)?;
        writeln!(meta, "SRC PORT:          {}", flow.src.1)?;
        writeln!(meta, "DST PORT:          {}", flow.dst.1)?;
        if let Some(leaf) = &chain.leaf {
            writeln!(meta, "TLS SUBJECT:       {}", leaf.subject)?;
            writeln!(meta, "TLS ISSUERDN:      {}", leaf.issuer)?;
            writeln!(meta, "TLS FINGERPRINT:   {}", leaf.fingerprint)?;
        }
        std::fs::write(self.dir.join(format!("{base}.meta")), meta)
    }
}
