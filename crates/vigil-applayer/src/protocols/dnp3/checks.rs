//! DNP3's value checks: `dnp3_func` (a function code by number or name),
//! `dnp3_ind` (internal indications, any of those named set) and
//! `dnp3_obj` (an object of a group and variation in the message).

use vigil_rules::Value;
use vigil_types::Direction;

use super::{Dnp3Tx, INDICATORS};
use crate::progress::Progress;
use crate::proto::{CheckDef, ProtoTx, TxCheck};

/// Function codes by `dnp3_func` name.
const FUNCTIONS: [(&str, u8); 37] = [
    ("confirm", 0),
    ("read", 1),
    ("write", 2),
    ("select", 3),
    ("operate", 4),
    ("direct_operate", 5),
    ("direct_operate_nr", 6),
    ("immed_freeze", 7),
    ("immed_freeze_nr", 8),
    ("freeze_clear", 9),
    ("freeze_clear_nr", 10),
    ("freeze_at_time", 11),
    ("freeze_at_time_nr", 12),
    ("cold_restart", 13),
    ("warm_restart", 14),
    ("initialize_data", 15),
    ("initialize_appl", 16),
    ("start_appl", 17),
    ("stop_appl", 18),
    ("save_config", 19),
    ("enable_unsolicited", 20),
    ("disable_unsolicited", 21),
    ("assign_class", 22),
    ("delay_measure", 23),
    ("record_current_time", 24),
    ("open_file", 25),
    ("close_file", 26),
    ("delete_file", 27),
    ("get_file_info", 28),
    ("authenticate_file", 29),
    ("abort_file", 30),
    ("activate_config", 31),
    ("authenticate_req", 32),
    ("authenticate_err", 33),
    ("response", 129),
    ("unsolicited_response", 130),
    ("authenticate_resp", 131),
];

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Dnp3Check {
    Function(u8),
    Indicators(u16),
    Object(u8, u8),
}

fn text(v: &Value) -> Result<&str, String> {
    match v {
        Value::Text(t) | Value::Str(t) => Ok(t.trim()),
        _ => Err("expects a value".into()),
    }
}

fn function(v: &Value) -> Result<Box<dyn TxCheck>, String> {
    let t = text(v)?;
    let code = match t.parse::<u8>() {
        Ok(n) => n,
        Err(_) => FUNCTIONS.iter().find(|(n, _)| n.eq_ignore_ascii_case(t)).map(|(_, c)| *c).ok_or_else(|| format!("unknown function '{t}'"))?,
    };
    Ok(Box::new(Dnp3Check::Function(code)))
}

fn indicators(v: &Value) -> Result<Box<dyn TxCheck>, String> {
    let mut bits = 0u16;
    for name in text(v)?.split(',').map(str::trim) {
        let bit = INDICATORS.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, b)| *b);
        bits |= bit.ok_or_else(|| format!("unknown indicator '{name}'"))?;
    }
    Ok(Box::new(Dnp3Check::Indicators(bits)))
}

fn object(v: &Value) -> Result<Box<dyn TxCheck>, String> {
    let t = text(v)?;
    let (g, var) = t.split_once(',').ok_or("expects group,variation")?;
    let n = |s: &str| s.trim().parse::<u8>().map_err(|_| format!("invalid number '{}'", s.trim()));
    Ok(Box::new(Dnp3Check::Object(n(g)?, n(var)?)))
}

const fn check(name: &'static str, compile: fn(&Value) -> Result<Box<dyn TxCheck>, String>) -> CheckDef {
    CheckDef { name, side: None, need: Progress::Complete, both_ways: true, compile }
}

pub(super) const CHECKS: &[CheckDef] = &[check("dnp3_func", function), check("dnp3_ind", indicators), check("dnp3_obj", object)];

impl TxCheck for Dnp3Check {
    fn matches(&self, tx: &dyn ProtoTx, dir: Direction, _now_secs: i64) -> bool {
        let Some(tx) = tx.as_any().downcast_ref::<Dnp3Tx>() else { return false };
        if dir != tx.dir {
            return false;
        }
        match self {
            Dnp3Check::Function(c) => tx.function == *c,
            Dnp3Check::Indicators(bits) => tx.iin.is_some_and(|i| i & bits != 0),
            Dnp3Check::Object(g, v) => tx.objects.iter().any(|o| o.group == *g && o.variation == *v),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_by_number_or_name() {
        assert!(function(&Value::Text("direct_operate".into())).is_ok());
        assert!(function(&Value::Text("5".into())).is_ok());
        assert!(function(&Value::Text("bogus".into())).is_err());
        assert!(indicators(&Value::Text("device_restart, need_time".into())).is_ok());
        assert!(object(&Value::Text("12,1".into())).is_ok());
        assert!(object(&Value::Text("12".into())).is_err());
    }
}
