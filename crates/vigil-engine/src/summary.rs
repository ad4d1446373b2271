use std::fmt;
use std::time::Duration;

/// What a run did, for the one-screen summary at exit.
#[derive(Debug, Clone, Default)]
pub struct Summary {
    pub files: usize,
    pub packets: u64,
    pub bytes: u64,
    pub wall: Duration,
    /// Packets whose decoding stopped on a malformed header.
    pub invalid: u64,
    /// Decode events raised (several may come from one packet).
    pub decode_events: u64,
    /// Flows tracked.
    pub flows: u64,
    /// IP datagrams rebuilt from fragments.
    pub reassembled: u64,
    pub alerts: u64,
    /// How much of the ruleset runs (when rules were given).
    pub rules: Option<String>,
    /// Packets lost before inspection (never, when reading files).
    pub dropped: u64,
    /// Frames of the files a BPF filter (`-f`) kept out.
    pub filtered: u64,
    pub eve_records: u64,
    /// Damaged or unreadable captures: each stops its own file only.
    pub capture_errors: Vec<String>,
    /// Checksum validation was switched off by `auto` after the first packets.
    pub checksum_auto_disabled: bool,
    /// Rule reloads swapped in, and refused (their rules had errors).
    pub rule_reloads: u32,
    pub rule_reloads_refused: u32,
    /// Reading stopped early on request (SIGINT/SIGTERM); what was read was inspected.
    pub interrupted: bool,
    /// Captured live (interfaces or a queue) rather than read from files.
    pub live: bool,
    /// How the packets were spread over threads.
    pub runmode: crate::runmode::Runmode,
}

impl fmt::Display for Summary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let secs = self.wall.as_secs_f64().max(1e-9);
        if self.live {
            writeln!(f, "vigil: live, {} packets, {} bytes in {:.3} s", self.packets, self.bytes, secs)?;
        } else {
            writeln!(
                f,
                "vigil: {} file(s), {} packets, {} bytes in {:.3} s",
                self.files, self.packets, self.bytes, secs
            )?;
        }
        writeln!(
            f,
            "  throughput     {:.1} Mbit/s, {:.1} kpps",
            self.bytes as f64 * 8.0 / secs / 1e6,
            self.packets as f64 / secs / 1e3
        )?;
        match self.runmode {
            crate::runmode::Runmode::Autofp { workers } => writeln!(f, "  runmode        autofp, {workers} workers")?,
            crate::runmode::Runmode::Workers { workers } => writeln!(f, "  runmode        workers, {workers} workers")?,
            crate::runmode::Runmode::Single => {}
        }
        if self.live {
            writeln!(f, "  received       {}", self.packets + self.dropped)?;
            writeln!(f, "  inspected      {}", self.packets)?;
        } else {
            writeln!(f, "  received       {}", self.packets)?;
            writeln!(f, "  inspected      {}", self.packets - self.dropped)?;
        }
        writeln!(f, "  dropped        {}", self.dropped)?;
        if self.filtered > 0 {
            writeln!(f, "  filtered       {} (not kept by the BPF filter)", self.filtered)?;
        }
        writeln!(f, "  decode errors  {} invalid packets, {} decode events", self.invalid, self.decode_events)?;
        writeln!(f, "  flows          {} ({} datagrams reassembled)", self.flows, self.reassembled)?;
        writeln!(f, "  alerts         {}", self.alerts)?;
        if let Some(r) = &self.rules {
            writeln!(f, "  rules          {r}")?;
        }
        writeln!(f, "  eve records    {}", self.eve_records)?;
        if self.checksum_auto_disabled {
            writeln!(
                f,
                "  checksums      validation switched off: over 10% of the first 1000 packets were bad (offloading?)"
            )?;
        }
        if self.rule_reloads + self.rule_reloads_refused > 0 {
            writeln!(f, "  rule reloads   {} done, {} refused", self.rule_reloads, self.rule_reloads_refused)?;
        }
        if self.interrupted {
            if self.live {
                writeln!(f, "  stopped        on request; every packet the kernel had queued was inspected")?;
            } else {
                writeln!(f, "  interrupted    reading stopped on request; every packet read was inspected")?;
            }
        }
        for e in &self.capture_errors {
            writeln!(f, "  capture error  {e}")?;
        }
        Ok(())
    }
}
