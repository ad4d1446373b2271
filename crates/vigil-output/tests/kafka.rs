//! EVE to Kafka against a real broker: Apache Kafka 4.1 in KRaft mode,
//! its jars from Maven Central (`scripts/kafka-jars.sh`), started by the
//! test on loopback ports of its own. Every record pushed arrives as one
//! message; with the broker gone for 5 s the sink goes on taking records
//! without making its callers wait, and delivers them once it is back.
//!
//! Runs with `cargo test -p vigil-output --features kafka --test kafka`
//! (`scripts/test.sh` does); needs java and mvn.
#![cfg(feature = "kafka")]

use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::Message;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use vigil_output::sink::{KafkaTarget, Sink, SinkTarget};

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// The broker's jars, fetched once.
fn jars() -> PathBuf {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/kafka-jars.sh");
    let out =
        Command::new(script).output().expect("scripts/kafka-jars.sh runs (java and mvn: scripts/deps.sh --tests)");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    PathBuf::from(text.lines().last().expect("the jar directory").trim())
}

/// A single-node KRaft broker; killed when dropped.
struct Broker {
    dir: PathBuf,
    classpath: String,
    port: u16,
    child: Option<Child>,
}

impl Broker {
    fn new(name: &str) -> Broker {
        let dir = std::env::temp_dir().join(format!("vigil-kafka-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let (port, controller) = (free_port(), free_port());
        let props = format!(
            "process.roles=broker,controller\nnode.id=1\ncontroller.quorum.voters=1@127.0.0.1:{controller}\n\
             listeners=PLAINTEXT://127.0.0.1:{port},CONTROLLER://127.0.0.1:{controller}\n\
             advertised.listeners=PLAINTEXT://127.0.0.1:{port}\ncontroller.listener.names=CONTROLLER\n\
             listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT\nlog.dirs={}\n\
             offsets.topic.replication.factor=1\ntransaction.state.log.replication.factor=1\n\
             transaction.state.log.min.isr=1\nnum.partitions=1\nauto.create.topics.enable=true\n\
             group.initial.rebalance.delay.ms=0\n",
            dir.join("data").display()
        );
        std::fs::write(dir.join("server.properties"), props).unwrap();
        let classpath = format!("{}/*", jars().display());
        let status = Command::new("java")
            .args(["-cp", &classpath, "kafka.tools.StorageTool", "format", "-t", "vigil-test-cluster-id0", "-c"])
            .arg(dir.join("server.properties"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .expect("java");
        assert!(status.success(), "formatting the broker's storage");
        let mut b = Broker { dir, classpath, port, child: None };
        b.start();
        b
    }

    fn start(&mut self) {
        let log = std::fs::File::create(self.dir.join("broker.log")).unwrap();
        let child = Command::new("java")
            .args(["-Xmx384m", "-cp", &self.classpath, "kafka.Kafka"])
            .arg(self.dir.join("server.properties"))
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .expect("java");
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(90);
        while std::net::TcpStream::connect(("127.0.0.1", self.port)).is_err() {
            assert!(
                Instant::now() < deadline,
                "the broker did not start; see {}",
                self.dir.join("broker.log").display()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn stop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    fn address(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }
}

impl Drop for Broker {
    fn drop(&mut self) {
        self.stop();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Every message of `topic`, as text, waiting until `want` came (or a minute passed).
fn consume(brokers: &str, topic: &str, want: usize) -> Vec<String> {
    let consumer: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", brokers)
        .set("group.id", "vigil-test")
        .set("auto.offset.reset", "earliest")
        .set("enable.auto.commit", "false")
        .create()
        .unwrap();
    consumer.subscribe(&[topic]).unwrap();
    let mut out = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(60);
    while out.len() < want && Instant::now() < deadline {
        if let Some(Ok(m)) = consumer.poll(Duration::from_millis(200)) {
            out.push(String::from_utf8_lossy(m.payload().unwrap_or_default()).into_owned());
        }
    }
    out
}

fn record(i: usize) -> String {
    format!("{{\"event_type\":\"alert\",\"n\":{i}}}\n")
}

#[test]
fn records_reach_kafka_and_an_outage_loses_none_of_them() {
    let mut broker = Broker::new("outage");
    let target = KafkaTarget {
        brokers: broker.address(),
        topic: "vigil-eve".into(),
        client_id: "vigil-test".into(),
        options: vec![("linger.ms".into(), "5".into())],
    };
    let sink = Sink::start(SinkTarget::Kafka(target), 1 << 20).unwrap();
    // Two records in one batch, then one per batch.
    sink.push(format!("{}{}", record(0), record(1)).as_bytes());
    for i in 2..20 {
        sink.push(record(i).as_bytes());
    }
    let got = consume(&broker.address(), "vigil-eve", 20);
    assert_eq!(got.len(), 20, "every record is a message");
    assert_eq!(got[0], record(0).trim_end());
    // The broker goes away for 5 s: pushing never waits, nothing is lost,
    // and delivery resumes once it is back.
    broker.stop();
    let pushed = Instant::now();
    for i in 20..40 {
        sink.push(record(i).as_bytes());
    }
    assert!(pushed.elapsed() < Duration::from_secs(1), "a sink never makes its caller wait");
    std::thread::sleep(Duration::from_secs(5));
    broker.start();
    let got = consume(&broker.address(), "vigil-eve", 40);
    let mut numbers: Vec<usize> = got
        .iter()
        .map(|m| serde_json::from_str::<serde_json::Value>(m).unwrap()["n"].as_u64().unwrap() as usize)
        .collect();
    numbers.sort_unstable();
    numbers.dedup();
    assert_eq!(numbers, (0..40).collect::<Vec<_>>(), "the records of the outage arrive too");
    let counts = sink.close();
    assert_eq!((counts.sent, counts.dropped), (40, 0), "{counts:?}");
}

#[test]
fn a_broker_never_reached_counts_its_records_dropped() {
    // Nothing listens: librdkafka keeps them until the message timeout,
    // which the test shortens; the close counts them dropped.
    let target = KafkaTarget {
        brokers: format!("127.0.0.1:{}", free_port()),
        topic: "vigil-eve".into(),
        client_id: "vigil-test".into(),
        options: vec![("message.timeout.ms".into(), "1000".into())],
    };
    let sink = Sink::start(SinkTarget::Kafka(target), 1 << 20).unwrap();
    for i in 0..5 {
        sink.push(record(i).as_bytes());
    }
    std::thread::sleep(Duration::from_millis(1500));
    sink.push(record(5).as_bytes());
    let counts = sink.close();
    assert_eq!(counts.sent + counts.dropped, 6, "{counts:?}");
    assert_eq!(counts.dropped, 6, "{counts:?}");
}
