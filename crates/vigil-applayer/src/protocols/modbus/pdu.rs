//! Modbus application data units over TCP (MBAP header, then the PDU) and
//! what Suricata's records say of them: function names, the kind of access
//! a function makes, its category, and each function's fields.

use serde_json::{Map, Value};

/// The MBAP header and the PDU after it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Adu {
    pub transaction: u16,
    pub protocol: u16,
    pub unit: u8,
    /// The function code as sent (bit 7 set: an exception response).
    pub function: u8,
    pub data: Vec<u8>,
}

/// Access flags, in the order Suricata prints them; the last two stand for
/// two bits each and print when both are set.
pub const READ: u16 = 1;
pub const WRITE: u16 = 2;
pub const DISCRETES: u16 = 4;
pub const COILS: u16 = 8;
pub const INPUT: u16 = 16;
pub const HOLDING: u16 = 32;
pub const SINGLE: u16 = 64;
pub const MULTIPLE: u16 = 128;
const ACCESS_NAMES: [(&str, u16); 10] = [
    ("READ", READ),
    ("WRITE", WRITE),
    ("DISCRETES", DISCRETES),
    ("COILS", COILS),
    ("INPUT", INPUT),
    ("HOLDING", HOLDING),
    ("SINGLE", SINGLE),
    ("MULTIPLE", MULTIPLE),
    ("WRITE_SINGLE", WRITE | SINGLE),
    ("WRITE_MULTIPLE", WRITE | MULTIPLE),
];

/// The access function `f` makes.
pub fn access(f: u8) -> u16 {
    match f {
        1 => READ | COILS,
        2 => READ | DISCRETES,
        3 => READ | HOLDING,
        4 => READ | INPUT,
        5 => WRITE | COILS | SINGLE,
        6 => WRITE | HOLDING | SINGLE,
        15 => WRITE | COILS | MULTIPLE,
        16 => WRITE | HOLDING | MULTIPLE,
        22 => WRITE | HOLDING | SINGLE,
        23 => READ | WRITE | HOLDING | MULTIPLE,
        24 => READ | HOLDING,
        _ => 0,
    }
}

pub fn access_text(a: u16) -> String {
    if a == 0 {
        return "NONE".into();
    }
    ACCESS_NAMES.iter().filter(|(_, bits)| a & bits == *bits).map(|(n, _)| *n).collect::<Vec<_>>().join(" | ")
}

/// The categories of the Modbus specification.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Category {
    PublicAssigned,
    PublicUnassigned,
    User,
    Reserved,
    None,
}

impl Category {
    pub fn of(function: u8, sub: Option<u16>) -> Category {
        match function {
            0 | 128..=255 => Category::None,
            8 if sub.is_some_and(|s| s == 19 || s >= 21) => Category::Reserved,
            9 | 10 | 13 | 14 | 41 | 42 | 90 | 91 | 125..=127 => Category::Reserved,
            65..=72 | 100..=110 => Category::User,
            1..=8 | 11 | 12 | 15..=17 | 20..=24 | 43 => Category::PublicAssigned,
            _ => Category::PublicUnassigned,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Category::PublicAssigned => "PUBLIC_ASSIGNED",
            Category::PublicUnassigned => "PUBLIC_UNASSIGNED",
            Category::User => "USER_DEFINED",
            Category::Reserved => "RESERVED",
            Category::None => "NONE",
        }
    }
}

pub fn function_name(f: u8) -> &'static str {
    match f & 0x7f {
        1 => "RdCoils",
        2 => "RdDiscreteInputs",
        3 => "RdHoldRegs",
        4 => "RdInputRegs",
        5 => "WrSingleCoil",
        6 => "WrSingleReg",
        7 => "RdExcStatus",
        8 => "Diagnostic",
        9 => "Program484",
        10 => "Poll484",
        11 => "GetCommEventCtr",
        12 => "GetCommEventLog",
        13 => "ProgramController",
        14 => "PollController",
        15 => "WrMultCoils",
        16 => "WrMultRegs",
        17 => "ReportServerID",
        18 => "Program884",
        19 => "ResetCommLink",
        20 => "RdFileRec",
        21 => "WrFileRec",
        22 => "MaskWrReg",
        23 => "RdWrMultRegs",
        24 => "RdFIFOQueue",
        40 => "ProgramConcept",
        43 => "MEI",
        125 => "FirmwareReplace",
        126 => "Program584_984",
        127 => "Report",
        _ => "Unknown",
    }
}

fn diagnostic_name(s: u16) -> &'static str {
    match s {
        0 => "RetQueryData",
        1 => "RestartCommOpt",
        2 => "RetDiagReg",
        3 => "ChangeInputDelimiter",
        4 => "ForceListenOnlyMode",
        10 => "ClearCtrDiagReg",
        11 => "RetBusMsgCount",
        12 => "RetBusCommErrCount",
        13 => "RetBusExcErrCount",
        14 => "RetServerMsgCount",
        15 => "RetServerNoRespCount",
        16 => "RetServerNAKCount",
        17 => "RetServerBusyCount",
        18 => "RetBusCharOverrunCount",
        20 => "ClearOverrunCounterFlag",
        _ => "Reserved",
    }
}

fn exception_name(e: u8) -> &'static str {
    match e {
        1 => "IllegalFunction",
        2 => "IllegalDataAddr",
        3 => "IllegalDataValue",
        4 => "ServerDeviceFail",
        5 => "Ack",
        6 => "ServerDeviceBusy",
        8 => "MemParityErr",
        10 => "GatewayPathUnavailable",
        11 => "GatewayTargetFailToResp",
        _ => "Unknown",
    }
}

fn mei_name(t: u8) -> &'static str {
    match t {
        13 => "CANOpenGenRefReqResp",
        14 => "RdDevId",
        _ => "Unknown",
    }
}

fn u16_at(b: &[u8], at: usize) -> Option<u16> {
    b.get(at..at + 2).map(|x| u16::from_be_bytes([x[0], x[1]]))
}

fn bytes(b: &[u8]) -> Value {
    crate::proto::escaped_text(b).into()
}

impl Adu {
    pub fn exception(&self) -> bool {
        self.function & 0x80 != 0
    }

    /// The diagnostic sub-function.
    pub fn subfunction(&self) -> Option<u16> {
        (self.function == 8).then(|| u16_at(&self.data, 0)).flatten()
    }

    /// The address range a request accesses (first and count) and the
    /// value a single write writes.
    pub fn accessed(&self) -> Option<(u16, u16, Option<u16>)> {
        let d = &self.data;
        match self.function {
            1..=4 | 15 | 16 | 23 => Some((u16_at(d, 0)?, u16_at(d, 2)?, None)),
            5 | 6 => Some((u16_at(d, 0)?, 1, Some(u16_at(d, 2)?))),
            22 | 24 => Some((u16_at(d, 0)?, 1, None)),
            _ => None,
        }
    }

    /// Its object in a record; `request`: sent by the client.
    pub fn eve(&self, request: bool) -> Value {
        let mut m = Map::new();
        m.insert("transaction_id".into(), self.transaction.into());
        m.insert("protocol_id".into(), self.protocol.into());
        m.insert("unit_id".into(), self.unit.into());
        m.insert("function_raw".into(), self.function.into());
        m.insert("function_code".into(), function_name(self.function).into());
        let (access, category) = if self.exception() {
            (0, Category::None)
        } else {
            (access(self.function), Category::of(self.function, self.subfunction()))
        };
        m.insert("access_type".into(), access_text(access).into());
        m.insert("category".into(), category.name().into());
        m.insert("error_flags".into(), "NONE".into());
        let d = &self.data;
        let mut obj = |key: &str, fields: Vec<(&str, Value)>| {
            m.insert(key.into(), Value::Object(fields.into_iter().map(|(k, v)| (k.to_string(), v)).collect()));
        };
        let after_count = |at: usize| d.get(at + 1..).unwrap_or_default();
        match (self.function, request) {
            (f, _) if f & 0x80 != 0 => {
                let e = d.first().copied().unwrap_or(0);
                obj("exception", vec![("raw", e.into()), ("code", exception_name(e).into())]);
            }
            (1..=4, true) | (24, true) => {
                let mut f = vec![("address", u16_at(d, 0).unwrap_or(0).into())];
                if self.function != 24 {
                    f.push(("quantity", u16_at(d, 2).unwrap_or(0).into()));
                }
                obj("read", f);
            }
            (1..=4 | 23, false) => obj("read", vec![("data", bytes(after_count(0)))]),
            (5 | 6, _) => obj("write", vec![("address", u16_at(d, 0).unwrap_or(0).into()), ("data", u16_at(d, 2).unwrap_or(0).into())]),
            (15 | 16, true) => obj(
                "write",
                vec![
                    ("address", u16_at(d, 0).unwrap_or(0).into()),
                    ("quantity", u16_at(d, 2).unwrap_or(0).into()),
                    ("data", bytes(after_count(4))),
                ],
            ),
            (15 | 16, false) => {
                obj("write", vec![("address", u16_at(d, 0).unwrap_or(0).into()), ("quantity", u16_at(d, 2).unwrap_or(0).into())])
            }
            (22, _) => obj(
                "write",
                vec![
                    ("address", u16_at(d, 0).unwrap_or(0).into()),
                    ("and_mask", u16_at(d, 2).unwrap_or(0).into()),
                    ("or_mask", u16_at(d, 4).unwrap_or(0).into()),
                ],
            ),
            (23, true) => {
                obj("read", vec![("address", u16_at(d, 0).unwrap_or(0).into()), ("quantity", u16_at(d, 2).unwrap_or(0).into())]);
                obj(
                    "write",
                    vec![
                        ("address", u16_at(d, 4).unwrap_or(0).into()),
                        ("quantity", u16_at(d, 6).unwrap_or(0).into()),
                        ("data", bytes(after_count(8))),
                    ],
                );
            }
            (8, _) => {
                let s = u16_at(d, 0).unwrap_or(0);
                obj(
                    "diagnostic",
                    vec![("raw", s.into()), ("code", diagnostic_name(s).into()), ("data", bytes(d.get(2..).unwrap_or_default()))],
                );
            }
            (43, _) => {
                let t = d.first().copied().unwrap_or(0);
                obj("mei", vec![("raw", t.into()), ("code", mei_name(t).into()), ("data", bytes(d.get(1..).unwrap_or_default()))]);
            }
            _ => {
                m.insert("data".into(), bytes(d));
            }
        }
        Value::Object(m)
    }
}

/// One ADU from the start of `b` and its length; `Err(needed)` when more
/// bytes are needed, `Ok(None)` when the header is not Modbus.
pub fn adu(b: &[u8]) -> Result<Option<(Adu, usize)>, usize> {
    if b.len() < 8 {
        return Err(8 - b.len());
    }
    let len = usize::from(u16::from_be_bytes([b[4], b[5]]));
    // The length counts the unit id and the PDU, at most 254 bytes.
    if !(2..=254).contains(&len) {
        return Ok(None);
    }
    let total = 6 + len;
    if b.len() < total {
        return Err(total - b.len());
    }
    let adu = Adu {
        transaction: u16::from_be_bytes([b[0], b[1]]),
        protocol: u16::from_be_bytes([b[2], b[3]]),
        unit: b[6],
        function: b[7],
        data: b[8..total].to_vec(),
    };
    Ok(Some((adu, total)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn access_prints_its_flags_and_their_pairs() {
        assert_eq!(access_text(access(1)), "READ | COILS");
        assert_eq!(access_text(access(5)), "WRITE | COILS | SINGLE | WRITE_SINGLE");
        assert_eq!(access_text(access(8)), "NONE");
        assert_eq!(Category::of(17, None).name(), "PUBLIC_ASSIGNED");
        assert_eq!(Category::of(66, None).name(), "USER_DEFINED");
        assert_eq!(Category::of(90, None).name(), "RESERVED");
        assert_eq!(Category::of(50, None).name(), "PUBLIC_UNASSIGNED");
    }

    #[test]
    fn adus_frame_by_their_length() {
        let b = b"\x00\x01\x00\x00\x00\x06\x0a\x01\x00\x00\x00\x01rest";
        let (a, n) = adu(b).unwrap().unwrap();
        assert_eq!((a.unit, a.function, n), (10, 1, 12));
        assert_eq!(a.eve(true)["read"], serde_json::json!({"address": 0, "quantity": 1}));
        assert_eq!(adu(&b[..10]), Err(2));
        assert_eq!(adu(b"\x00\x01\x00\x00\x01\x00\x0a\x01"), Ok(None));
        let e = Adu { transaction: 0, protocol: 0, unit: 10, function: 0x88, data: vec![11] };
        assert_eq!(e.eve(false)["exception"], serde_json::json!({"raw": 11, "code": "GatewayTargetFailToResp"}));
    }
}
