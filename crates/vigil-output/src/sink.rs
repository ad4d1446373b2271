//! EVE records sent somewhere other than a file: a unix datagram socket,
//! a unix stream socket, syslog, or Redis (a list, a channel or a stream),
//! as Suricata's `eve-log.filetype` names them; and, with the `kafka`
//! feature, a Kafka topic (vigil's own, through librdkafka).
//!
//! A sink never makes a worker wait. Writers hand it whole lines; they go
//! into a queue bounded in bytes, and one thread per sink sends them. When
//! the far end is slow or gone the queue fills, and what no longer fits is
//! dropped and counted. The thread reconnects on its own (every 100 ms at
//! first, then at most every second) and goes on with what is queued; the
//! batch in hand when a connection broke is counted as dropped, since how
//! much of it arrived cannot be known.
//!
//! ```no_run
//! use vigil_output::sink::{Sink, SinkTarget};
//! let sink = Sink::start(SinkTarget::UnixStream("/run/collector.sock".into()), 1 << 20).unwrap();
//! sink.push(b"{\"event_type\":\"alert\"}\n");
//! let counts = sink.close();
//! # let _ = counts;
//! ```

use std::collections::VecDeque;
use std::io::{self, BufRead, BufReader, Write};
use std::net::TcpStream;
use std::os::unix::net::{UnixDatagram, UnixStream};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// Where a sink sends records.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SinkTarget {
    /// `unix_dgram`: one record per datagram to a listening socket.
    UnixDgram(PathBuf),
    /// `unix_stream`: records as lines on a connection to a listening socket.
    UnixStream(PathBuf),
    /// `syslog`: one message per record to the local syslog socket, as
    /// syslog(3) formats them (`<PRI>Mmm dd hh:mm:ss identity[pid]: ...`).
    Syslog {
        socket: PathBuf,
        facility: u8,
        level: u8,
        identity: String,
    },
    Redis(RedisTarget),
    /// `kafka` (vigil's own): each record a message of a topic. Without the
    /// `kafka` feature it cannot connect.
    Kafka(KafkaTarget),
}

/// `eve-log.kafka`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KafkaTarget {
    /// `bootstrap.servers`.
    pub brokers: String,
    pub topic: String,
    pub client_id: String,
    /// librdkafka properties as given.
    pub options: Vec<(String, String)>,
}

/// `eve-log.redis`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RedisTarget {
    pub server: String,
    pub port: u16,
    pub command: RedisCommand,
    /// The list, channel or stream.
    pub key: String,
    /// Commands sent before their replies are read (`pipelining.batch-size`; 1 without).
    pub batch: usize,
    /// `XADD ... MAXLEN`: 0 keeps every entry.
    pub stream_maxlen: u64,
    /// `MAXLEN N` rather than `MAXLEN ~ N`.
    pub trim_exact: bool,
}

/// `eve-log.redis.mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RedisCommand {
    Lpush,
    Rpush,
    Publish,
    Xadd,
}

/// What a sink did with the records it was given.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct SinkCounts {
    /// Records handed to the far end.
    pub sent: u64,
    /// Records lost: the queue was full, the connection broke with them in
    /// hand, the far end refused them, or the run ended with the far end gone.
    pub dropped: u64,
    /// Connections made again after the first.
    pub reconnects: u64,
}

struct Queue {
    batches: VecDeque<Vec<u8>>,
    bytes: usize,
    closing: bool,
}

struct Shared {
    queue: Mutex<Queue>,
    ready: Condvar,
    cap: usize,
    sent: AtomicU64,
    dropped: AtomicU64,
    reconnects: AtomicU64,
    /// The end of the run's grace: what is left is dropped, not sent.
    abandon: std::sync::atomic::AtomicBool,
}

impl Shared {
    fn lock(&self) -> std::sync::MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn drop_lines(&self, batch: &[u8]) {
        self.dropped.fetch_add(lines(batch), Ordering::Relaxed);
    }
}

fn lines(batch: &[u8]) -> u64 {
    batch.iter().filter(|&&b| b == b'\n').count() as u64
}

/// A sink and the thread that sends its records.
pub struct Sink {
    shared: Arc<Shared>,
    thread: Mutex<Option<std::thread::JoinHandle<()>>>,
}

impl std::fmt::Debug for Sink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sink").field("counts", &self.counts()).finish_non_exhaustive()
    }
}

const FIRST_RETRY: Duration = Duration::from_millis(100);
const LAST_RETRY: Duration = Duration::from_secs(1);
/// How long one send or reply may take before the far end counts as gone.
const IO_TIMEOUT: Duration = Duration::from_secs(5);

impl Sink {
    /// Starts the sending thread; `cap`: bytes the queue holds at most.
    pub fn start(target: SinkTarget, cap: usize) -> io::Result<Arc<Sink>> {
        let shared = Arc::new(Shared {
            queue: Mutex::new(Queue { batches: VecDeque::new(), bytes: 0, closing: false }),
            ready: Condvar::new(),
            cap,
            sent: AtomicU64::new(0),
            dropped: AtomicU64::new(0),
            reconnects: AtomicU64::new(0),
            abandon: std::sync::atomic::AtomicBool::new(false),
        });
        let worker = shared.clone();
        let thread = std::thread::Builder::new().name("eve-sink".into()).spawn(move || send_loop(&target, &worker))?;
        Ok(Arc::new(Sink { shared, thread: Mutex::new(Some(thread)) }))
    }

    /// Queues whole lines (each ends with `\n`); what does not fit is dropped.
    pub fn push(&self, batch: &[u8]) {
        if batch.is_empty() {
            return;
        }
        let mut q = self.shared.lock();
        if q.closing || q.bytes + batch.len() > self.shared.cap {
            drop(q);
            self.shared.drop_lines(batch);
            return;
        }
        q.bytes += batch.len();
        q.batches.push_back(batch.to_vec());
        drop(q);
        self.shared.ready.notify_one();
    }

    pub fn counts(&self) -> SinkCounts {
        SinkCounts {
            sent: self.shared.sent.load(Ordering::Relaxed),
            dropped: self.shared.dropped.load(Ordering::Relaxed),
            reconnects: self.shared.reconnects.load(Ordering::Relaxed),
        }
    }

    /// Sends what is queued (if the far end can be reached, within
    /// [`CLOSE_GRACE`]), counts the rest as dropped and stops the thread;
    /// the final counts. Later pushes are dropped.
    pub fn close(&self) -> SinkCounts {
        self.close_within(CLOSE_GRACE)
    }

    /// [`Sink::close`] with another grace period.
    pub fn close_within(&self, grace: Duration) -> SinkCounts {
        self.shared.lock().closing = true;
        self.shared.ready.notify_all();
        let Some(t) = self.thread.lock().unwrap_or_else(|e| e.into_inner()).take() else { return self.counts() };
        let end = Instant::now() + grace;
        while !t.is_finished() && Instant::now() < end {
            std::thread::sleep(Duration::from_millis(5));
        }
        // Past the grace the thread gives up at its next step (a send in
        // hand ends within its own timeout).
        self.shared.abandon.store(true, Ordering::Relaxed);
        self.shared.ready.notify_all();
        let _ = t.join();
        self.counts()
    }
}

impl Drop for Sink {
    fn drop(&mut self) {
        self.close();
    }
}

/// The next batch, waiting for one; `None` once closing and empty.
fn next_batch(shared: &Shared) -> Option<Vec<u8>> {
    let mut q = shared.lock();
    loop {
        if let Some(b) = q.batches.pop_front() {
            q.bytes -= b.len();
            return Some(b);
        }
        if q.closing {
            return None;
        }
        q = shared.ready.wait(q).unwrap_or_else(|e| e.into_inner());
    }
}

fn closing(shared: &Shared) -> bool {
    shared.lock().closing
}

fn send_loop(target: &SinkTarget, shared: &Shared) {
    let mut conn: Option<Conn> = None;
    let mut connected_before = false;
    let mut retry = FIRST_RETRY;
    // Once the far end cannot be reached while closing, or the grace is
    // over, the rest is dropped.
    let mut give_up = false;
    while let Some(batch) = next_batch(shared) {
        give_up |= shared.abandon.load(Ordering::Relaxed);
        if give_up {
            shared.drop_lines(&batch);
            continue;
        }
        while conn.is_none() && !shared.abandon.load(Ordering::Relaxed) {
            match Conn::open(target) {
                Ok(c) => {
                    if connected_before {
                        shared.reconnects.fetch_add(1, Ordering::Relaxed);
                    }
                    connected_before = true;
                    retry = FIRST_RETRY;
                    conn = Some(c);
                }
                Err(_) if closing(shared) => break,
                Err(_) => {
                    // Wait, but wake for the end of the run.
                    let q = shared.lock();
                    let _ = shared.ready.wait_timeout_while(q, retry, |q| !q.closing);
                    retry = (retry * 2).min(LAST_RETRY);
                }
            }
        }
        let Some(c) = conn.as_mut() else {
            give_up = true;
            shared.drop_lines(&batch);
            continue;
        };
        let (sent, failed) = c.send(target, &batch);
        shared.sent.fetch_add(sent, Ordering::Relaxed);
        // Refused by the far end, or in hand when the connection broke.
        shared.dropped.fetch_add(lines(&batch).saturating_sub(sent), Ordering::Relaxed);
        settle(c.undelivered(), shared);
        if failed.is_some() {
            conn = None;
        }
    }
    if let Some(c) = conn.as_mut() {
        settle(c.finish(Instant::now() + CLOSE_FLUSH), shared);
    }
}

/// Records counted as sent that never arrived move to the dropped count.
fn settle(lost: u64, shared: &Shared) {
    if lost > 0 {
        shared.sent.fetch_sub(lost.min(shared.sent.load(Ordering::Relaxed)), Ordering::Relaxed);
        shared.dropped.fetch_add(lost, Ordering::Relaxed);
    }
}

/// Linux's errno for a datagram larger than the socket takes.
const EMSGSIZE: i32 = 90;

/// The largest Redis reply read (one bulk string): replies to the commands
/// sent are short; a larger one is a broken or hostile server.
const MAX_REPLY: i64 = 1 << 20;

enum Conn {
    Dgram(UnixDatagram),
    Stream(UnixStream),
    Redis(BufReader<TcpStream>),
    #[cfg(feature = "kafka")]
    Kafka(kafka::Producer),
}

impl Conn {
    fn open(target: &SinkTarget) -> io::Result<Conn> {
        Ok(match target {
            SinkTarget::UnixDgram(path) | SinkTarget::Syslog { socket: path, .. } => {
                let s = UnixDatagram::unbound()?;
                s.connect(path)?;
                s.set_write_timeout(Some(IO_TIMEOUT))?;
                Conn::Dgram(s)
            }
            SinkTarget::UnixStream(path) => {
                let s = UnixStream::connect(path)?;
                s.set_write_timeout(Some(IO_TIMEOUT))?;
                Conn::Stream(s)
            }
            SinkTarget::Redis(r) => {
                let addr = std::net::ToSocketAddrs::to_socket_addrs(&(r.server.as_str(), r.port))?
                    .next()
                    .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, "no address"))?;
                let s = TcpStream::connect_timeout(&addr, IO_TIMEOUT)?;
                s.set_write_timeout(Some(IO_TIMEOUT))?;
                s.set_read_timeout(Some(IO_TIMEOUT))?;
                s.set_nodelay(true)?;
                Conn::Redis(BufReader::new(s))
            }
            #[cfg(feature = "kafka")]
            SinkTarget::Kafka(k) => Conn::Kafka(kafka::Producer::open(k)?),
            #[cfg(not(feature = "kafka"))]
            SinkTarget::Kafka(_) => return Err(io::Error::other("vigil was built without the kafka feature")),
        })
    }

    /// Sends a batch of lines: the records the far end took (the others it
    /// refused, or they were lost), and the error that broke the
    /// connection, if one did (the rest of the batch is then lost).
    fn send(&mut self, target: &SinkTarget, batch: &[u8]) -> (u64, Option<io::Error>) {
        let records = batch.split(|&b| b == b'\n').filter(|l| !l.is_empty());
        let mut sent = 0u64;
        // One datagram: a record too large for one is refused alone.
        let mut datagram = |s: &UnixDatagram, msg: &[u8]| match s.send(msg) {
            Ok(_) => {
                sent += 1;
                Ok(())
            }
            Err(e) if e.raw_os_error() == Some(EMSGSIZE) => Ok(()),
            Err(e) => Err(e),
        };
        let failed = match (self, target) {
            (Conn::Stream(s), _) => match s.write_all(batch) {
                Ok(()) => {
                    sent = lines(batch);
                    None
                }
                Err(e) => Some(e),
            },
            (Conn::Dgram(s), SinkTarget::Syslog { facility, level, identity, .. }) => {
                let pri = u16::from(*facility) * 8 + u16::from(*level);
                let head = format!("<{pri}>{} {identity}[{}]: ", syslog_time(), std::process::id());
                let mut msg = Vec::new();
                records
                    .map(|r| {
                        msg.clear();
                        msg.extend_from_slice(head.as_bytes());
                        msg.extend_from_slice(r);
                        datagram(s, &msg)
                    })
                    .find_map(Result::err)
            }
            (Conn::Dgram(s), _) => records.map(|r| datagram(s, r)).find_map(Result::err),
            (Conn::Redis(s), SinkTarget::Redis(r)) => {
                let mut out = Vec::new();
                let mut pending = 0usize;
                let mut records = records.peekable();
                let mut failed = None;
                while let Some(rec) = records.next() {
                    redis_command(&mut out, r, rec);
                    pending += 1;
                    if pending < r.batch.max(1) && records.peek().is_some() {
                        continue;
                    }
                    if let Err(e) = s.get_mut().write_all(&out) {
                        failed = Some(e);
                        break;
                    }
                    out.clear();
                    for _ in 0..pending {
                        match read_reply(s) {
                            Ok(true) => sent += 1,
                            Ok(false) => {}
                            Err(e) => {
                                failed = Some(e);
                                break;
                            }
                        }
                    }
                    if failed.is_some() {
                        break;
                    }
                    pending = 0;
                }
                failed
            }
            (Conn::Redis(_), _) => Some(io::Error::other("not a Redis target")),
            #[cfg(feature = "kafka")]
            (Conn::Kafka(p), _) => {
                sent = p.send(records);
                None
            }
        };
        (sent, failed)
    }

    /// Records an earlier `send` counted as sent that the far end never
    /// took (Kafka reports deliveries after the fact).
    fn undelivered(&mut self) -> u64 {
        match self {
            #[cfg(feature = "kafka")]
            Conn::Kafka(p) => p.take_failed(),
            _ => 0,
        }
    }

    /// The end of the run: what is still on its way gets until `deadline`;
    /// what did not arrive by then.
    fn finish(&mut self, deadline: Instant) -> u64 {
        match self {
            #[cfg(feature = "kafka")]
            Conn::Kafka(p) => p.finish(deadline),
            _ => {
                let _ = deadline;
                0
            }
        }
    }
}

/// One command in RESP: an array of bulk strings.
fn redis_command(out: &mut Vec<u8>, r: &RedisTarget, record: &[u8]) {
    let maxlen = r.stream_maxlen.to_string();
    let args: Vec<&[u8]> = match r.command {
        RedisCommand::Lpush => vec![b"LPUSH", r.key.as_bytes(), record],
        RedisCommand::Rpush => vec![b"RPUSH", r.key.as_bytes(), record],
        RedisCommand::Publish => vec![b"PUBLISH", r.key.as_bytes(), record],
        RedisCommand::Xadd if r.stream_maxlen == 0 => vec![b"XADD", r.key.as_bytes(), b"*", b"eve", record],
        RedisCommand::Xadd => {
            let trim: &[u8] = if r.trim_exact { b"=" } else { b"~" };
            vec![b"XADD", r.key.as_bytes(), b"MAXLEN", trim, maxlen.as_bytes(), b"*", b"eve", record]
        }
    };
    out.extend_from_slice(format!("*{}\r\n", args.len()).as_bytes());
    for a in args {
        out.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
        out.extend_from_slice(a);
        out.extend_from_slice(b"\r\n");
    }
}

/// Reads one reply; false for an error reply.
fn read_reply(s: &mut BufReader<TcpStream>) -> io::Result<bool> {
    let mut line = Vec::new();
    if s.read_until(b'\n', &mut line)? == 0 {
        return Err(io::ErrorKind::UnexpectedEof.into());
    }
    let bad = || io::Error::new(io::ErrorKind::InvalidData, "unexpected Redis reply");
    match line.first() {
        Some(b'+') | Some(b':') => Ok(true),
        Some(b'-') => Ok(false),
        Some(b'$') => {
            let n: i64 = std::str::from_utf8(&line[1..]).ok().and_then(|t| t.trim().parse().ok()).ok_or_else(bad)?;
            if n > MAX_REPLY {
                return Err(bad());
            }
            if n >= 0 {
                // The bulk string and its CRLF.
                let mut rest = vec![0u8; n as usize + 2];
                io::Read::read_exact(s, &mut rest)?;
            }
            Ok(true)
        }
        _ => Err(bad()),
    }
}

/// syslog(3)'s time stamp (local time is not known here: UTC).
fn syslog_time() -> String {
    const MONTHS: [&str; 12] = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
    let secs = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let (_, month, day) = crate::time::civil_from_days((secs / 86_400) as i64);
    let rest = secs % 86_400;
    format!(
        "{} {day:>2} {:02}:{:02}:{:02}",
        MONTHS[(month as usize).clamp(1, 12) - 1],
        rest / 3600,
        rest % 3600 / 60,
        rest % 60
    )
}

/// Time allowed for what is queued to go out at the end of a run.
pub const CLOSE_GRACE: Duration = Duration::from_secs(5);
/// Of that grace, how long Kafka's client has to deliver what it holds.
const CLOSE_FLUSH: Duration = Duration::from_secs(4);

/// Waits until `sink` has nothing queued or `grace` has passed.
pub fn drain(sink: &Sink, grace: Duration) {
    let end = Instant::now() + grace;
    while Instant::now() < end && sink.shared.lock().bytes > 0 {
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// The Kafka producer of a sink (the `kafka` feature): librdkafka queues
/// and sends each record as a message of the topic, reconnecting on its own;
/// its delivery reports say which never arrived.
#[cfg(feature = "kafka")]
mod kafka {
    use super::KafkaTarget;
    use rdkafka::config::ClientConfig;
    use rdkafka::producer::{BaseProducer, BaseRecord, DeliveryResult, Producer as _, ProducerContext};
    use rdkafka::ClientContext;
    use std::io;
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::Arc;
    use std::time::{Duration, Instant};

    /// Counts the messages librdkafka gave up on.
    struct Reports {
        failed: Arc<AtomicU64>,
    }

    impl ClientContext for Reports {}

    impl ProducerContext for Reports {
        type DeliveryOpaque = ();
        fn delivery(&self, result: &DeliveryResult<'_>, _: ()) {
            if result.is_err() {
                self.failed.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    pub(super) struct Producer {
        inner: BaseProducer<Reports>,
        topic: String,
        failed: Arc<AtomicU64>,
    }

    /// How long a record waits for room in librdkafka's queue before it
    /// is dropped: the sink thread never holds the workers up, and a queue
    /// that stays full means the brokers are gone.
    const ROOM_WAIT: Duration = Duration::from_millis(200);

    impl Producer {
        pub(super) fn open(t: &KafkaTarget) -> io::Result<Producer> {
            let mut cfg = ClientConfig::new();
            cfg.set("bootstrap.servers", &t.brokers).set("client.id", &t.client_id);
            // A record undelivered after a minute is dropped (and counted),
            // unless the configuration says otherwise.
            cfg.set("message.timeout.ms", "60000");
            for (k, v) in &t.options {
                cfg.set(k, v);
            }
            let failed = Arc::new(AtomicU64::new(0));
            let inner = cfg
                .create_with_context(Reports { failed: failed.clone() })
                .map_err(|e| io::Error::other(format!("kafka: {e}")))?;
            Ok(Producer { inner, topic: t.topic.clone(), failed })
        }

        /// Queues each record; the number librdkafka took.
        pub(super) fn send<'a>(&mut self, records: impl Iterator<Item = &'a [u8]>) -> u64 {
            let mut taken = 0;
            for rec in records {
                let mut record = BaseRecord::<(), [u8]>::to(&self.topic).payload(rec);
                let deadline = Instant::now() + ROOM_WAIT;
                loop {
                    match self.inner.send(record) {
                        Ok(()) => {
                            taken += 1;
                            break;
                        }
                        Err((e, back)) => {
                            let full =
                                matches!(e.rdkafka_error_code(), Some(rdkafka::types::RDKafkaErrorCode::QueueFull));
                            if !full || Instant::now() >= deadline {
                                break;
                            }
                            record = back;
                            self.inner.poll(Duration::from_millis(10));
                        }
                    }
                }
            }
            self.inner.poll(Duration::ZERO);
            taken
        }

        /// Delivery failures reported since the last call.
        pub(super) fn take_failed(&mut self) -> u64 {
            self.inner.poll(Duration::ZERO);
            self.failed.swap(0, Ordering::Relaxed)
        }

        /// Waits until `deadline` for what is queued; what failed and what
        /// is still in flight then (lost with the producer). The failures
        /// are taken before the queue is read: a record stays in librdkafka's
        /// count until its report is served, so each is counted once (a
        /// report served after the count was read counted it twice).
        pub(super) fn finish(&mut self, deadline: Instant) -> u64 {
            let _ = self.inner.flush(deadline.saturating_duration_since(Instant::now()));
            let failed = self.take_failed();
            failed + self.inner.in_flight_count().max(0) as u64
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;
    use std::os::unix::net::UnixListener;

    fn dir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("vigil-sink-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn datagrams_carry_one_record_each() {
        let d = dir("dgram");
        let path = d.join("collector.sock");
        let rx = UnixDatagram::bind(&path).unwrap();
        rx.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let sink = Sink::start(SinkTarget::UnixDgram(path), 1 << 20).unwrap();
        sink.push(b"{\"a\":1}\n{\"b\":2}\n");
        let mut buf = [0u8; 64];
        let n = rx.recv(&mut buf).unwrap();
        assert_eq!(&buf[..n], b"{\"a\":1}");
        let n = rx.recv(&mut buf).unwrap();
        assert_eq!(&buf[..n], b"{\"b\":2}");
        assert_eq!(sink.close(), SinkCounts { sent: 2, dropped: 0, reconnects: 0 });
        std::fs::remove_dir_all(&d).ok();
    }

    #[test]
    fn a_record_too_large_for_a_datagram_is_dropped_alone() {
        let d = dir("dgram-big");
        let path = d.join("collector.sock");
        let rx = UnixDatagram::bind(&path).unwrap();
        rx.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let sink = Sink::start(SinkTarget::UnixDgram(path), 8 << 20).unwrap();
        let mut batch = vec![b'x'; 4 << 20];
        batch.extend_from_slice(b"\n{\"small\":1}\n");
        sink.push(&batch);
        let mut buf = [0u8; 64];
        let n = rx.recv(&mut buf).unwrap();
        assert_eq!(&buf[..n], b"{\"small\":1}");
        assert_eq!(sink.close(), SinkCounts { sent: 1, dropped: 1, reconnects: 0 });
        std::fs::remove_dir_all(&d).ok();
    }

    #[test]
    fn syslog_messages_have_priority_identity_and_pid() {
        let d = dir("syslog");
        let path = d.join("log");
        let rx = UnixDatagram::bind(&path).unwrap();
        rx.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let target = SinkTarget::Syslog { socket: path, facility: 21, level: 6, identity: "suricata".into() };
        let sink = Sink::start(target, 1 << 20).unwrap();
        sink.push(b"{\"a\":1}\n");
        let mut buf = [0u8; 128];
        let n = rx.recv(&mut buf).unwrap();
        let msg = std::str::from_utf8(&buf[..n]).unwrap();
        // local5.info: 21 * 8 + 6.
        assert!(msg.starts_with("<174>"), "{msg}");
        assert!(msg.ends_with(&format!(" suricata[{}]: {{\"a\":1}}", std::process::id())), "{msg}");
        assert_eq!(
            msg.len(),
            "<174>Nov 28 01:02:03 ".len() + format!("suricata[{}]: {{\"a\":1}}", std::process::id()).len()
        );
        sink.close();
        std::fs::remove_dir_all(&d).ok();
    }

    #[test]
    fn a_stream_sink_gone_for_a_while_drops_counts_and_resumes() {
        let d = dir("stream");
        let path = d.join("collector.sock");
        let listener = UnixListener::bind(&path).unwrap();
        // A queue of four records.
        let rec = |i: u32| format!("{{\"n\":{i:08}}}\n").into_bytes();
        let len = rec(0).len();
        let sink = Sink::start(SinkTarget::UnixStream(path.clone()), 4 * len).unwrap();
        sink.push(&rec(1));
        let (mut conn, _) = listener.accept().unwrap();
        let mut got = vec![0u8; len];
        conn.read_exact(&mut got).unwrap();
        assert_eq!(got, rec(1));
        // The collector goes away.
        drop(conn);
        drop(listener);
        std::fs::remove_file(&path).unwrap();
        // Writes into a closed peer fail within a record or two; keep
        // pushing until the sink has noticed and its queue has overflowed.
        let deadline = Instant::now() + Duration::from_secs(20);
        let mut i = 2;
        while sink.counts().dropped < 10 && Instant::now() < deadline {
            sink.push(&rec(i));
            i += 1;
            std::thread::sleep(Duration::from_millis(5));
        }
        assert!(sink.counts().dropped >= 10, "{:?}", sink.counts());
        // Back: what is queued arrives, and new records too.
        let listener = UnixListener::bind(&path).unwrap();
        let (mut conn, _) = listener.accept().unwrap();
        drain(&sink, Duration::from_secs(10));
        sink.push(&rec(999_999));
        conn.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let mut seen = Vec::new();
        let mut buf = vec![0u8; len];
        while !seen.contains(&rec(999_999)) {
            conn.read_exact(&mut buf).unwrap();
            seen.push(buf.to_vec());
        }
        let c = sink.close();
        assert_eq!(c.reconnects, 1);
        assert_eq!(c.sent + c.dropped, u64::from(i), "every record is sent or counted: {c:?}");
        std::fs::remove_dir_all(&d).ok();
    }

    #[test]
    fn redis_commands_are_resp_arrays() {
        let r = RedisTarget {
            server: "127.0.0.1".into(),
            port: 6379,
            command: RedisCommand::Xadd,
            key: "suricata".into(),
            batch: 1,
            stream_maxlen: 100_000,
            trim_exact: false,
        };
        let mut out = Vec::new();
        redis_command(&mut out, &r, b"{}");
        assert_eq!(
            out,
            b"*8\r\n$4\r\nXADD\r\n$8\r\nsuricata\r\n$6\r\nMAXLEN\r\n$1\r\n~\r\n$6\r\n100000\r\n$1\r\n*\r\n$3\r\neve\r\n$2\r\n{}\r\n"
        );
        out.clear();
        redis_command(&mut out, &RedisTarget { command: RedisCommand::Lpush, ..r }, b"{}");
        assert_eq!(out, b"*3\r\n$5\r\nLPUSH\r\n$8\r\nsuricata\r\n$2\r\n{}\r\n");
    }

    #[test]
    fn a_sink_never_reached_counts_everything_dropped_at_close() {
        let d = dir("never");
        let sink = Sink::start(SinkTarget::UnixStream(d.join("nobody.sock")), 1 << 20).unwrap();
        sink.push(b"{}\n{}\n{}\n");
        let c = sink.close();
        assert_eq!((c.sent, c.dropped), (0, 3));
        std::fs::remove_dir_all(&d).ok();
    }

    #[test]
    fn syslog_time_looks_like_syslogs() {
        let t = syslog_time();
        assert_eq!(t.len(), 15, "{t}");
        assert!(t.as_bytes()[9] == b':' && t.as_bytes()[12] == b':', "{t}");
    }
}
