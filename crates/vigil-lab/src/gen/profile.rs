//! What each profile's flows look like: one call makes one flow (for
//! `synscan`, one probe) as a list of datagrams, from the seeded generator.

use super::app;
use super::flow::{Addr, Dgram, Ends, TcpFlow};
use super::options::{IpMix, Profile, SizeSpec};
use super::truth;
use crate::rng::Rng;

/// What shapes one flow besides the profile.
pub struct Shape<'a> {
    pub rng: &'a mut Rng,
    pub size: SizeSpec,
    pub ip: IpMix,
    /// The scanner's source port (`synscan`).
    pub scan_port: u16,
}

/// Ports open on every scanned host (besides a random one in a hundred).
const OPEN_PORTS: [u16; 12] = [21, 22, 25, 53, 80, 110, 143, 443, 445, 3306, 3389, 8080];

/// The kinds of flow, with the ports they use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Http,
    Https,
    Dns,
    Udp,
    Icmp,
    Rtp,
    Exchange,
    Citrix,
    Smtp,
    Oracle,
}

/// `mixed`: by flow count.
const MIXED: [(Kind, f64); 5] =
    [(Kind::Http, 30.0), (Kind::Https, 25.0), (Kind::Dns, 20.0), (Kind::Udp, 15.0), (Kind::Icmp, 10.0)];

/// `enterprise`: by share of bytes (percent), as in the 60 Gbit/s Suricata
/// study; HTTP and HTTPS split evenly.
const ENTERPRISE: [(Kind, f64); 8] = [
    (Kind::Http, 38.75),
    (Kind::Https, 38.75),
    (Kind::Rtp, 13.2),
    (Kind::Exchange, 4.3),
    (Kind::Citrix, 2.2),
    (Kind::Smtp, 1.1),
    (Kind::Dns, 1.1),
    (Kind::Oracle, 0.7),
];

/// Roughly the IP bytes of one flow of `kind` (TCP control packets: 6 × 52).
fn mean_bytes(kind: Kind, m: f64) -> f64 {
    let tcp = 6.0 * 52.0;
    match kind {
        Kind::Http => tcp + 150.0 + 2.5 * m + 52.0,
        Kind::Https | Kind::Exchange => tcp + 300.0 + 3.5 * m + 52.0,
        Kind::Citrix => tcp + 4.0 * (110.0 + m),
        Kind::Smtp => tcp + 7.0 * 2.0 * 70.0 + 2.5 * m,
        Kind::Oracle => tcp + 2.0 * (160.0 + m),
        Kind::Rtp => 35.0 * 200.0,
        Kind::Dns => 2.0 * 80.0,
        Kind::Udp => 2.5 * m,
        Kind::Icmp => 2.0 * m,
    }
}

impl Shape<'_> {
    /// One datagram size of the spec.
    fn ip_size(&mut self) -> usize {
        match self.size {
            SizeSpec::Fixed(n) => n,
            SizeSpec::Uniform(a, b) => self.rng.range(a as u64, b as u64) as usize,
            SizeSpec::Imix => [40, 576, 1500][self.rng.weighted(&[7.0, 4.0, 1.0])],
        }
    }

    /// A payload length: a datagram size less `headers`, at least `min`.
    fn payload(&mut self, headers: usize, min: usize) -> usize {
        self.ip_size().saturating_sub(headers).max(min)
    }

    /// `bytes` cut into segments of drawn sizes.
    fn chunks(&mut self, bytes: &[u8], headers: usize) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        let mut at = 0;
        while at < bytes.len() {
            let n = self.payload(headers, 1).min(bytes.len() - at);
            out.push(bytes[at..at + n].to_vec());
            at += n;
        }
        out
    }

    /// The ends of flow number `unit`: the client (address and port) is a
    /// function of the number, so no two flows share a 5-tuple.
    fn ends(&mut self, unit: u64) -> (Ends, u16) {
        let v6 = match self.ip {
            IpMix::V4 => false,
            IpMix::V6 => true,
            IpMix::Mix => self.rng.percent(50.0),
        };
        // Client host and port are a function of the flow number: no two
        // flows (of the first 32,000 × 50,000) share an address and port.
        let host = 1 + (unit % 32_000) as u16;
        let port = 10_000 + ((unit / 32_000) % 50_000) as u16;
        let server = 1 + (self.rng.next_u32() % 200) as u8;
        let (client, server) = if v6 {
            let mut c = [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0];
            c[14..16].copy_from_slice(&host.to_be_bytes());
            let mut s = [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0];
            s[15] = server;
            (Addr::V6(c), Addr::V6(s))
        } else {
            (Addr::V4([198, 18, 128 | (host >> 8) as u8, host as u8]), Addr::V4([198, 19, 0, server]))
        };
        (Ends { client, server, flow: unit }, port)
    }

    fn isn(&mut self) -> [u32; 2] {
        [self.rng.next_u32(), self.rng.next_u32()]
    }

    /// One flow of `profile`.
    pub fn flow(&mut self, profile: Profile, unit: u64) -> Vec<Dgram> {
        let kind = match profile {
            Profile::Mixed => MIXED[self.rng.weighted(&MIXED.map(|(_, w)| w))].0,
            Profile::Enterprise => {
                let m = self.size.mean();
                let weights = ENTERPRISE.map(|(k, share)| share / mean_bytes(k, m));
                ENTERPRISE[self.rng.weighted(&weights)].0
            }
            Profile::Udp => Kind::Udp,
            Profile::Icmp => Kind::Icmp,
            Profile::Synscan => return self.probe(unit),
        };
        self.kind(kind, unit)
    }

    fn kind(&mut self, kind: Kind, unit: u64) -> Vec<Dgram> {
        let (ends, sport) = self.ends(unit);
        let tcp = ends.ip_header() + 20;
        let udp = ends.ip_header() + 8;
        let isn = self.isn();
        let mut out = Vec::new();
        match kind {
            Kind::Http => {
                let req = app::http_request("www.example.com", &format!("/objects/{unit}"));
                let total: usize = (0..self.rng.range(1, 4)).map(|_| self.payload(tcp, 1)).sum();
                let resp = app::http_response(self.rng, total);
                let segs = self.chunks(&resp, tcp);
                let mut t = TcpFlow::new(ends, sport, 80, isn, &mut out);
                t.handshake();
                t.send(true, &req, None);
                for s in &segs {
                    t.send(false, s, None);
                }
                t.ack(true);
                t.close();
            }
            // A fifth of Exchange flows: the endpoint mapper on 135 (bind, bind_ack).
            Kind::Exchange if self.rng.percent(20.0) => {
                let call = self.rng.next_u32() % 1000;
                let mut t = TcpFlow::new(ends, sport, 135, isn, &mut out);
                t.handshake();
                t.send(true, &app::dcerpc_bind(call), None);
                t.send(false, &app::dcerpc_bind_ack(call), None);
                t.ack(true);
                t.close();
            }
            Kind::Https | Kind::Exchange => {
                let host = if kind == Kind::Https {
                    format!("www{}.example.net", unit % 1000)
                } else {
                    "mail.example.com".into()
                };
                let ch = app::tls_client_hello(self.rng, &host);
                let sh = app::tls_server_hello(self.rng);
                let n = self.payload(tcp, 6);
                let req = app::tls_app_data(self.rng, n);
                let recs: Vec<Vec<u8>> = (0..self.rng.range(1, 4))
                    .map(|_| {
                        let n = self.payload(tcp, 6);
                        app::tls_app_data(self.rng, n)
                    })
                    .collect();
                let mut t = TcpFlow::new(ends, sport, 443, isn, &mut out);
                t.handshake();
                t.send(true, &ch, None);
                t.send(false, &sh, None);
                t.send(true, &req, None);
                for r in &recs {
                    t.send(false, r, None);
                }
                t.ack(true);
                t.close();
            }
            Kind::Citrix => {
                let port = if self.rng.percent(50.0) { 1494 } else { 2598 };
                let rounds: Vec<(Vec<u8>, Vec<u8>)> = (0..self.rng.range(2, 6))
                    .map(|_| {
                        let small = self.rng.range(20, 120) as usize;
                        let big = self.payload(tcp, 1);
                        (app::filler(self.rng, small), app::filler(self.rng, big))
                    })
                    .collect();
                let mut t = TcpFlow::new(ends, sport, port, isn, &mut out);
                t.handshake();
                for (c, s) in &rounds {
                    t.send(true, c, None);
                    t.send(false, s, None);
                }
                t.ack(true);
                t.close();
            }
            Kind::Smtp => {
                let total: usize = (0..self.rng.range(1, 4)).map(|_| self.payload(tcp, 1)).sum();
                let mut body = app::filler(self.rng, total);
                body.extend_from_slice(b"\r\n.\r\n");
                let body = self.chunks(&body, tcp);
                let mut t = TcpFlow::new(ends, sport, 25, isn, &mut out);
                t.handshake();
                t.send(false, b"220 mail.example.com ESMTP vigil-lab\r\n", None);
                for (c, s) in [
                    ("EHLO client.example.org\r\n", "250 mail.example.com\r\n"),
                    ("MAIL FROM:<alice@example.org>\r\n", "250 2.1.0 Ok\r\n"),
                    ("RCPT TO:<bob@example.com>\r\n", "250 2.1.5 Ok\r\n"),
                    ("DATA\r\n", "354 End data with <CR><LF>.<CR><LF>\r\n"),
                ] {
                    t.send(true, c.as_bytes(), None);
                    t.send(false, s.as_bytes(), None);
                }
                for b in &body {
                    t.send(true, b, None);
                }
                t.send(false, b"250 2.0.0 Ok: queued\r\n", None);
                t.send(true, b"QUIT\r\n", None);
                t.send(false, b"221 2.0.0 Bye\r\n", None);
                t.close();
            }
            Kind::Oracle => {
                let rounds: Vec<(Vec<u8>, Vec<u8>)> = (0..self.rng.range(1, 3))
                    .map(|_| {
                        let q = self.rng.range(60, 200) as usize;
                        let r = self.payload(tcp + 10, 1);
                        (app::tns_data(&app::filler(self.rng, q)), app::tns_data(&app::filler(self.rng, r)))
                    })
                    .collect();
                let mut t = TcpFlow::new(ends, sport, 1521, isn, &mut out);
                t.handshake();
                for (q, r) in &rounds {
                    t.send(true, q, None);
                    t.send(false, r, None);
                }
                t.ack(true);
                t.close();
            }
            Kind::Dns => {
                let q = app::dns_query(self.rng.next_u32() as u16, &format!("h{}.example.com", unit % 100_000));
                let a = app::dns_answer(&q, [198, 19, 0, 1 + (unit % 200) as u8]);
                out.push(ends.dgram(ends.ip(true).udp(sport, 53).payload(&q), None));
                out.push(ends.dgram(ends.ip(false).udp(53, sport).payload(&a), None));
            }
            Kind::Udp => {
                let dport = self.rng.range(40_000, 49_999) as u16;
                for i in 0..self.rng.range(1, 4) {
                    let n = self.payload(udp, 1);
                    let data = app::filler(self.rng, n);
                    let to_server = i % 2 == 0;
                    let (s, d) = if to_server { (sport, dport) } else { (dport, sport) };
                    out.push(ends.dgram(ends.ip(to_server).udp(s, d).payload(&data), None));
                }
            }
            Kind::Icmp => {
                let n = self.payload(udp, 1);
                let data = app::filler(self.rng, n);
                out.extend(self.echo(&ends, sport, &data, None));
            }
            Kind::Rtp => {
                let sport = 16384 + 2 * (self.rng.next_u32() % 8192) as u16;
                let dport = 16384 + 2 * (self.rng.next_u32() % 8192) as u16;
                let (ssrc, seq0, ts0) = (self.rng.next_u32(), self.rng.next_u32() as u16, self.rng.next_u32());
                for i in 0..self.rng.range(20, 50) as u32 {
                    let p = app::rtp(self.rng, seq0.wrapping_add(i as u16), ts0.wrapping_add(160 * i), ssrc);
                    out.push(ends.dgram(ends.ip(true).udp(sport, dport).payload(&p), None));
                }
            }
        }
        out
    }

    /// An echo request and its reply (ICMPv6 over IPv6), identifier `ident`.
    fn echo(&self, ends: &Ends, ident: u16, data: &[u8], marker: Option<usize>) -> Vec<Dgram> {
        let (req, rep) = if ends.v6() { (128, 129) } else { (8, 0) };
        vec![
            ends.dgram(ends.icmp(true, req, ident, 1, data), marker),
            ends.dgram(ends.icmp(false, rep, ident, 1, data), marker),
        ]
    }

    /// Probe number `unit` of a SYN scan: one scanner walks every port of a
    /// host in a scrambled order, then the next host.
    fn probe(&mut self, unit: u64) -> Vec<Dgram> {
        let v6 = match self.ip {
            IpMix::V4 => false,
            IpMix::V6 => true,
            IpMix::Mix => self.rng.percent(50.0),
        };
        let host = 1 + ((unit / 65_535) % 250) as u8;
        let port = ((unit % 65_535) * 7919 % 65_535) as u16 + 1;
        let ends = if v6 {
            let mut c = [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x66];
            let mut s = [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0];
            s[15] = host;
            c[7] = 0;
            Ends { client: Addr::V6(c), server: Addr::V6(s), flow: unit }
        } else {
            Ends { client: Addr::V4([198, 18, 0, 66]), server: Addr::V4([198, 19, 1, host]), flow: unit }
        };
        let isn = self.isn();
        let mut out = Vec::new();
        // The well-known services answer, and about one other port in a hundred.
        let open = self.rng.percent(1.0) || OPEN_PORTS.contains(&port);
        TcpFlow::new(ends, self.scan_port, port, isn, &mut out).probe(open);
        out
    }

    /// A malicious flow carrying the marker of kind `marker`
    /// (`truth::TCP`, `UDP` or `ICMP`): TCP: an HTTP request with the marker
    /// in its path after the handshake (one per flow); UDP: one datagram;
    /// ICMP: an echo request and its reply, both carrying it.
    pub fn malicious(&mut self, marker: usize, unit: u64) -> Vec<Dgram> {
        let (ends, sport) = self.ends(unit);
        let text = truth::MARKERS[marker].marker;
        let mut out = Vec::new();
        match marker {
            truth::TCP => {
                let isn = self.isn();
                let req = app::http_request("www.example.com", &format!("/download/{text}"));
                let resp = b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n";
                let mut t = TcpFlow::new(ends, sport, 80, isn, &mut out);
                t.handshake();
                t.send(true, &req, Some(marker));
                t.send(false, resp, None);
                t.ack(true);
                t.close();
            }
            truth::UDP => {
                let n = self.payload(ends.ip_header() + 8, text.len());
                let mut data = text.as_bytes().to_vec();
                data.extend(app::filler(self.rng, n - text.len()));
                let dport = self.rng.range(40_000, 49_999) as u16;
                out.push(ends.dgram(ends.ip(true).udp(sport, dport).payload(&data), Some(marker)));
            }
            _ => {
                let n = self.payload(ends.ip_header() + 8, text.len());
                let mut data = text.as_bytes().to_vec();
                data.extend(app::filler(self.rng, n - text.len()));
                out.extend(self.echo(&ends, sport, &data, Some(marker)));
            }
        }
        out
    }
}
