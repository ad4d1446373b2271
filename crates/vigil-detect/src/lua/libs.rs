//! The `suricata.*` libraries a script can `require`, with Suricata 8's
//! names: `packet`, `flow`, `rule`, `http`, `dns`, `ssh`, `tls`, `ja3`,
//! `smtp`, `ntp`, `flowvar`, `flowint`, `file`, `config`, `base64`, `hashing`,
//! `log` and `util`. The libraries of data
//! (`packet`, `flow`, `rule` and the protocols) are tables whose
//! `get`/`get_tx` functions are bound for each call of `match` or `log`
//! ([`bind`]): outside one they fail.
//!
//! The protocol libraries read transactions through the protocol API only:
//! their buffers by keyword name, and for DNS (and TLS validity) their EVE
//! object.

use super::LuaInput;
use mlua::{Lua, Scope, Table, Value};
use std::cell::RefCell;
use vigil_types::Direction;

/// The libraries, by `require` name.
const LIBS: &[&str] = &[
    "suricata.packet",
    "suricata.rule",
    "suricata.config",
    "suricata.flow",
    "suricata.http",
    "suricata.dns",
    "suricata.ssh",
    "suricata.tls",
    "suricata.ja3",
    "suricata.smtp",
    "suricata.ntp",
    "suricata.flowvar",
    "suricata.flowint",
    "suricata.file",
    "suricata.base64",
    "suricata.hashing",
    "suricata.log",
    "suricata.util",
];

/// Log lines scripts wrote with `suricata.log`, kept until the run logs them.
#[derive(Default)]
pub(super) struct Logged(pub RefCell<Vec<(&'static str, String)>>);

/// Puts `require` and the libraries in a fresh state.
pub(super) fn install(lua: &Lua) -> mlua::Result<()> {
    let loaded = lua.create_table()?;
    for name in LIBS {
        loaded.set(*name, lua.create_table()?)?;
    }
    fill_base64(lua, &loaded.get::<Table>("suricata.base64")?)?;
    fill_hashing(lua, &loaded.get::<Table>("suricata.hashing")?)?;
    fill_log(lua, &loaded.get::<Table>("suricata.log")?)?;
    // `thread_info()`: the calling thread's id and name (`W#01` for a
    // worker), as Suricata's answers.
    loaded.get::<Table>("suricata.util")?.set(
        "thread_info",
        lua.create_function(|lua, _: mlua::MultiValue| {
            let t = lua.create_table()?;
            t.set("id", i64::from(rustix::thread::gettid().as_raw_nonzero().get()))?;
            // In the `single` runmode the one worker is the main thread:
            // Suricata names it `W#01` there too.
            let name = match std::thread::current().name() {
                None | Some("main") => "W#01".to_string(),
                Some(n) => n.to_string(),
            };
            t.set("name", name)?;
            Ok(t)
        })?,
    )?;
    for (lib, getter) in [
        ("suricata.packet", "get"),
        ("suricata.rule", "get_rule"),
        ("suricata.flow", "get"),
        ("suricata.http", "get_tx"),
        ("suricata.dns", "get_tx"),
        ("suricata.ssh", "get_tx"),
        ("suricata.tls", "get_tx"),
        ("suricata.ja3", "get_tx"),
        ("suricata.smtp", "get_tx"),
        ("suricata.ntp", "get_tx"),
        ("suricata.file", "get_file"),
    ] {
        let msg = format!("{lib}.{getter} is only available while the script's match or log function runs");
        loaded.get::<Table>(lib)?.set(
            getter,
            lua.create_function(move |_, ()| -> mlua::Result<()> { Err(mlua::Error::RuntimeError(msg.clone())) })?,
        )?;
    }
    fill_flow_vars(lua, &loaded)?;
    lua.set_named_registry_value("vigil.loaded", &loaded)?;
    set_log_path(lua, None)?;
    lua.set_app_data(Logged::default());
    let require = lua.create_function(|lua, name: String| {
        let loaded: Table = lua.named_registry_value("vigil.loaded")?;
        match loaded.get::<Value>(name.as_str())? {
            Value::Nil => Err(mlua::Error::RuntimeError(format!("module '{name}' not found"))),
            v => Ok(v),
        }
    })?;
    lua.globals().set("require", require)
}

/// The registry functions the variable objects call, by name; outside a
/// rule's `match` they fail.
const VAR_FNS: [&str; 4] = ["vigil.fv.value", "vigil.fv.set", "vigil.fi.value", "vigil.fi.set"];

/// Counters `suricata.flowint.register` named, in order.
#[derive(Default)]
struct FlowintNames(RefCell<Vec<String>>);

/// The counters a script's `init` registered.
pub(super) fn registered_flowints(lua: &Lua) -> Vec<String> {
    lua.app_data_ref::<FlowintNames>().map(|n| n.0.borrow().clone()).unwrap_or_default()
}

/// `suricata.flowvar` and `suricata.flowint` (Suricata 8): `register(name)`
/// in `init`, `get(name)` (in `thread_init`) for an object whose methods
/// read and change the variable of the flow `match` runs on: `value()`
/// (nil while unset), `set(value, len)`; counters also `incr()` and
/// `decr()`, which answer the new value.
fn fill_flow_vars(lua: &Lua, loaded: &Table) -> mlua::Result<()> {
    lua.set_app_data(FlowintNames::default());
    for name in VAR_FNS {
        let msg = format!("{name}: flow variables are only available while a rule's match function runs");
        lua.set_named_registry_value(
            name,
            lua.create_function(move |_, _: mlua::MultiValue| -> mlua::Result<()> {
                Err(mlua::Error::RuntimeError(msg.clone()))
            })?,
        )?;
    }
    let call = |lua: &Lua, f: &str, args: mlua::MultiValue| -> mlua::Result<mlua::MultiValue> {
        lua.named_registry_value::<mlua::Function>(f)?.call(args)
    };
    let fv: Table = loaded.get("suricata.flowvar")?;
    fv.set("register", lua.create_function(|_, _name: String| Ok(()))?)?;
    fv.set(
        "get",
        lua.create_function(move |lua, name: String| {
            let o = lua.create_table()?;
            let n = name.clone();
            o.set(
                "value",
                lua.create_function(move |lua, _: mlua::MultiValue| {
                    call(lua, "vigil.fv.value", mlua::MultiValue::from_iter([Value::String(lua.create_string(&n)?)]))
                })?,
            )?;
            let n = name;
            o.set(
                "set",
                lua.create_function(move |lua, (_, value, len): (Value, mlua::LuaString, Option<i64>)| {
                    let args = [
                        Value::String(lua.create_string(&n)?),
                        Value::String(value),
                        len.map_or(Value::Nil, Value::Integer),
                    ];
                    call(lua, "vigil.fv.set", mlua::MultiValue::from_iter(args))
                })?,
            )?;
            Ok(o)
        })?,
    )?;
    let fi: Table = loaded.get("suricata.flowint")?;
    fi.set(
        "register",
        lua.create_function(|lua, name: String| {
            if let Some(names) = lua.app_data_ref::<FlowintNames>() {
                let mut v = names.0.borrow_mut();
                if !v.contains(&name) {
                    v.push(name);
                }
            }
            Ok(())
        })?,
    )?;
    fi.set(
        "get",
        lua.create_function(move |lua, name: String| {
            let o = lua.create_table()?;
            for (method, delta) in [("value", None), ("incr", Some(1i64)), ("decr", Some(-1))] {
                let n = name.clone();
                o.set(
                    method,
                    lua.create_function(move |lua, _: mlua::MultiValue| {
                        let key = Value::String(lua.create_string(&n)?);
                        let now = call(lua, "vigil.fi.value", mlua::MultiValue::from_iter([key.clone()]))?;
                        let Some(d) = delta else { return Ok(now) };
                        let v = match now.into_iter().next() {
                            Some(Value::Integer(i)) => i,
                            Some(Value::Number(f)) => f as i64,
                            _ => 0,
                        };
                        let new = (v + d).clamp(0, i64::from(u32::MAX));
                        call(lua, "vigil.fi.set", mlua::MultiValue::from_iter([key, Value::Integer(new)]))?;
                        Ok(mlua::MultiValue::from_iter([Value::Integer(new)]))
                    })?,
                )?;
            }
            let n = name;
            o.set(
                "set",
                lua.create_function(move |lua, (_, v): (Value, i64)| {
                    let args = [Value::String(lua.create_string(&n)?), Value::Integer(v)];
                    call(lua, "vigil.fi.set", mlua::MultiValue::from_iter(args))
                })?,
            )?;
            Ok(o)
        })?,
    )?;
    Ok(())
}

/// Binds the variable functions to the flow of one call of `match`.
fn bind_vars<'s>(lua: &Lua, scope: &'s Scope<'s, '_>, vars: &'s dyn super::FlowVars) -> mlua::Result<()> {
    lua.set_named_registry_value(
        "vigil.fv.value",
        scope.create_function(move |lua, name: String| match vars.flowvar(&name) {
            Some(val) => Ok((Value::String(lua.create_string(&val)?), Value::Integer(val.len() as i64))),
            None => Ok((Value::Nil, Value::Nil)),
        })?,
    )?;
    lua.set_named_registry_value(
        "vigil.fv.set",
        scope.create_function(move |_, (name, value, len): (String, mlua::LuaString, Option<i64>)| {
            let bytes = value.as_bytes();
            let n = len.map_or(bytes.len(), |l| usize::try_from(l).unwrap_or(0).min(bytes.len()));
            vars.set_flowvar(&name, &bytes[..n]);
            Ok(())
        })?,
    )?;
    lua.set_named_registry_value(
        "vigil.fi.value",
        scope.create_function(move |_, name: String| Ok(vars.flowint(&name).map(i64::from)))?,
    )?;
    lua.set_named_registry_value(
        "vigil.fi.set",
        scope.create_function(move |_, (name, value): (String, i64)| {
            vars.set_flowint(&name, u32::try_from(value.max(0)).unwrap_or(u32::MAX));
            Ok(())
        })?,
    )?;
    Ok(())
}

/// `suricata.config`: `log_path()`, the directory outputs write to
/// (`None` where there is none, as for rules checked alone).
pub(super) fn set_log_path(lua: &Lua, dir: Option<&std::path::Path>) -> mlua::Result<()> {
    let loaded: Table = lua.named_registry_value("vigil.loaded")?;
    let path = dir.map(|d| d.display().to_string());
    loaded.get::<Table>("suricata.config")?.set("log_path", lua.create_function(move |_, ()| Ok(path.clone()))?)
}

/// Binds the data libraries to `input` for one call of `match` (or `log`).
pub(super) fn bind<'s>(lua: &Lua, scope: &'s Scope<'s, '_>, input: &'s LuaInput<'s>) -> mlua::Result<()> {
    // Only the getters are made here: the objects they return (tables of
    // methods) are made when a script first asks, once per call.
    let loaded: Table = lua.named_registry_value("vigil.loaded")?;
    if let Some(vars) = input.vars {
        bind_vars(lua, scope, vars)?;
    }
    let packet = lazy(scope, move |lua| match input.p {
        Some(p) => Ok(Value::Table(packet_object(lua, scope, p)?)),
        None => Ok(Value::Nil),
    })?;
    loaded.get::<Table>("suricata.packet")?.set("get", packet)?;
    let rule = lazy(scope, move |lua| match input.rule {
        Some(r) => Ok(Value::Table(rule_object(lua, r)?)),
        None => Ok(Value::Nil),
    })?;
    loaded.get::<Table>("suricata.rule")?.set("get_rule", rule)?;
    let flow = lazy(scope, move |lua| match input.flow {
        Some(_) => Ok(Value::Table(flow_object(lua, scope, input)?)),
        None => Ok(Value::Nil),
    })?;
    loaded.get::<Table>("suricata.flow")?.set("get", flow)?;
    let file = lazy(scope, move |lua| match input.file {
        Some(f) => Ok(Value::Table(file_object(lua, f)?)),
        None => Ok(Value::Nil),
    })?;
    loaded.get::<Table>("suricata.file")?.set("get_file", file)?;
    for (lib, proto, view) in [
        ("suricata.http", "http", "http"),
        ("suricata.dns", "dns", "dns"),
        ("suricata.ssh", "ssh", "ssh"),
        ("suricata.tls", "tls", "tls"),
        ("suricata.ja3", "tls", "ja3"),
        ("suricata.smtp", "smtp", "smtp"),
        ("suricata.ntp", "ntp", "ntp"),
    ] {
        let tx = lazy(scope, move |lua| {
            match input.tx.as_ref().and_then(|(t, d)| t.as_proto(proto_of(proto)).map(|t| (t, *d))) {
                Some((t, dir)) => Ok(Value::Table(tx_object(lua, scope, view, t, dir)?)),
                None => Ok(Value::Nil),
            }
        })?;
        let err = format!("no {proto} transaction");
        // `tx, err = lib.get_tx()`: the error only without a transaction.
        let get_tx = scope.create_function(move |_, args: mlua::MultiValue| {
            let v: Value = tx.call(args)?;
            let e = v.is_nil().then(|| err.clone());
            Ok((v, e))
        })?;
        loaded.get::<Table>(lib)?.set("get_tx", get_tx)?;
    }
    Ok(())
}

/// A function answering what `make` makes, made on the first call only.
fn lazy<'s>(scope: &'s Scope<'s, '_>, make: impl Fn(&Lua) -> mlua::Result<Value> + 's) -> mlua::Result<mlua::Function> {
    let cache: RefCell<Option<Value>> = RefCell::new(None);
    scope.create_function(move |lua, _: mlua::MultiValue| {
        if let Some(v) = cache.borrow().as_ref() {
            return Ok(v.clone());
        }
        let v = make(lua)?;
        *cache.borrow_mut() = Some(v.clone());
        Ok(v)
    })
}

fn proto_of(name: &str) -> vigil_types::AppProto {
    vigil_applayer::proto::find(name).map_or(vigil_types::AppProto::Unknown, |d| d.app_proto())
}

/// `rule.get_rule()`: the signature that matched. Its values are copied:
/// a handful of small ones.
fn rule_object(lua: &Lua, r: super::LuaRule<'_>) -> mlua::Result<Table> {
    let o = lua.create_table()?;
    let (sid, gid, rev, prio) = (i64::from(r.sid), i64::from(r.gid), i64::from(r.rev), i64::from(r.priority));
    o.set("sid", lua.create_function(move |_, _: mlua::MultiValue| Ok(sid))?)?;
    o.set("gid", lua.create_function(move |_, _: mlua::MultiValue| Ok(gid))?)?;
    o.set("rev", lua.create_function(move |_, _: mlua::MultiValue| Ok(rev))?)?;
    o.set("priority", lua.create_function(move |_, _: mlua::MultiValue| Ok(prio))?)?;
    for (name, v) in [("msg", r.msg), ("action", r.action), ("class_description", r.class_description)] {
        let v = v.to_string();
        o.set(name, lua.create_function(move |_, _: mlua::MultiValue| Ok(v.clone()))?)?;
    }
    Ok(o)
}

/// `packet.get()`: the packet in hand.
fn packet_object<'s>(lua: &Lua, scope: &'s Scope<'s, '_>, p: &'s vigil_decode::Packet<'s>) -> mlua::Result<Table> {
    let o = lua.create_table()?;
    o.set(
        "timestamp",
        scope
            .create_function(move |_, _: mlua::MultiValue| Ok((p.ts.secs() as f64, f64::from(p.ts.subsec_micros()))))?,
    )?;
    o.set("timestring_legacy", scope.create_function(move |_, _: mlua::MultiValue| Ok(p.ts.legacy()))?)?;
    o.set("timestring_iso8601", scope.create_function(move |_, _: mlua::MultiValue| Ok(p.ts.iso8601()))?)?;
    o.set(
        "tuple",
        scope.create_function(move |lua, _: mlua::MultiValue| {
            let Some(ip) = p.ip else { return Ok(mlua::MultiValue::new()) };
            let (a, b) = match p.transport {
                vigil_decode::Transport::Icmp { kind, code } => (i64::from(kind), i64::from(code)),
                _ => (i64::from(p.sport().unwrap_or(0)), i64::from(p.dport().unwrap_or(0))),
            };
            let v = if ip.src.is_ipv4() { 4 } else { 6 };
            (v, ip.src.to_string(), ip.dst.to_string(), i64::from(p.proto), a, b).into_lua_multi(lua)
        })?,
    )?;
    o.set("payload", scope.create_function(move |lua, _: mlua::MultiValue| lua.create_string(p.payload()))?)?;
    o.set("packet", scope.create_function(move |lua, _: mlua::MultiValue| lua.create_string(p.data))?)?;
    o.set("pcap_cnt", scope.create_function(move |_, _: mlua::MultiValue| Ok(p.pcap_cnt as i64))?)?;
    Ok(o)
}

use mlua::IntoLuaMulti;

/// `flow.get()`: the packet's flow.
fn flow_object<'s>(lua: &Lua, scope: &'s Scope<'s, '_>, input: &'s LuaInput<'s>) -> mlua::Result<Table> {
    let Some(f) = input.flow else { return lua.create_table() };
    let o = lua.create_table()?;
    o.set(
        "timestamps",
        scope.create_function(move |_, _: mlua::MultiValue| {
            Ok((
                f.start.secs() as f64,
                f.last.secs() as f64,
                f64::from(f.start.subsec_micros()),
                f64::from(f.last.subsec_micros()),
            ))
        })?,
    )?;
    o.set("timestring_legacy", scope.create_function(move |_, _: mlua::MultiValue| Ok(f.start.legacy()))?)?;
    o.set("timestring_iso8601", scope.create_function(move |_, _: mlua::MultiValue| Ok(f.start.iso8601()))?)?;
    o.set(
        "tuple",
        scope.create_function(move |_, _: mlua::MultiValue| {
            let v = if f.src.is_ipv4() { 4 } else { 6 };
            Ok((v, f.src.to_string(), f.dst.to_string(), i64::from(f.ip_proto), i64::from(f.sport), i64::from(f.dport)))
        })?,
    )?;
    o.set(
        "app_layer_proto",
        scope.create_function(move |_, _: mlua::MultiValue| Ok((f.app[0], f.app[1], f.app[2], f.app[3], f.app[4])))?,
    )?;
    o.set("has_alerts", scope.create_function(move |_, _: mlua::MultiValue| Ok(f.has_alerts))?)?;
    o.set(
        "stats",
        scope.create_function(move |_, _: mlua::MultiValue| {
            Ok((f.stats[0] as i64, f.stats[1] as i64, f.stats[2] as i64, f.stats[3] as i64))
        })?,
    )?;
    o.set("id", scope.create_function(move |_, _: mlua::MultiValue| Ok(f.id as i64))?)?;
    Ok(o)
}

/// `http.get_tx()`, `dns.get_tx()`, `ssh.get_tx()`: the transaction in hand.
fn tx_object<'s>(
    lua: &Lua,
    scope: &'s Scope<'s, '_>,
    proto: &'static str,
    tx: vigil_applayer::TxRef<'s>,
    dir: Direction,
) -> mlua::Result<Table> {
    let o = lua.create_table()?;
    let t = tx.tx;
    let get = move |name: &str, side: Direction| first(t, name, side);
    let string_method = |o: &Table, method: &str, name: &'static str, side: Direction, suffix: &'static [u8]| {
        o.set(
            method,
            scope.create_function(move |lua, _: mlua::MultiValue| match get(name, side) {
                Some(v) => Ok(Value::String(lua.create_string([v, suffix].concat())?)),
                None => Ok(Value::Nil),
            })?,
        )
    };
    match proto {
        "http" => {
            use Direction::{ToClient as Tc, ToServer as Ts};
            string_method(&o, "request_line", "http.request_line", Ts, b"")?;
            // Suricata 8.0.6 hands the status line over with its line end.
            string_method(&o, "response_line", "http.response_line", Tc, b"\r\n")?;
            string_method(&o, "request_uri_raw", "http.uri.raw", Ts, b"")?;
            string_method(&o, "request_uri_normalized", "http.uri", Ts, b"")?;
            string_method(&o, "request_host", "http.host", Ts, b"")?;
            string_method(&o, "request_headers_raw", "http.header.raw", Ts, b"")?;
            string_method(&o, "response_headers_raw", "http.header.raw", Tc, b"")?;
            for (side, one, all) in
                [(Ts, "request_header", "request_headers"), (Tc, "response_header", "response_headers")]
            {
                o.set(
                    one,
                    scope.create_function(move |lua, args: mlua::MultiValue| {
                        let Some(name) = last_string(&args) else { return Ok(Value::Nil) };
                        let raw = get("http.header.raw", side).unwrap_or_default();
                        match header_fields(raw).into_iter().find(|(k, _)| k.eq_ignore_ascii_case(name.as_bytes())) {
                            Some((_, v)) => Ok(Value::String(lua.create_string(v)?)),
                            None => Ok(Value::Nil),
                        }
                    })?,
                )?;
                o.set(
                    all,
                    scope.create_function(move |lua, _: mlua::MultiValue| {
                        let out = lua.create_table()?;
                        for (k, v) in header_fields(get("http.header.raw", side).unwrap_or_default()) {
                            out.set(lua.create_string(k)?, lua.create_string(v)?)?;
                        }
                        Ok(out)
                    })?,
                )?;
            }
            for (method, name) in [("request_body", "http.request_body"), ("response_body", "http.response_body")] {
                o.set(
                    method,
                    scope.create_function(move |lua, _: mlua::MultiValue| {
                        match get(name, Ts).filter(|b| !b.is_empty()) {
                            Some(b) => {
                                let chunks = lua.create_table()?;
                                chunks.push(lua.create_string(b)?)?;
                                Ok(Value::Table(chunks))
                            }
                            None => Ok(Value::Nil),
                        }
                    })?,
                )?;
            }
        }
        "ssh" => {
            use Direction::{ToClient as Tc, ToServer as Ts};
            string_method(&o, "client_proto", "ssh.proto", Ts, b"")?;
            string_method(&o, "server_proto", "ssh.proto", Tc, b"")?;
            string_method(&o, "client_software", "ssh.software", Ts, b"")?;
            string_method(&o, "server_software", "ssh.software", Tc, b"")?;
            string_method(&o, "client_hassh", "ssh.hassh", Ts, b"")?;
            string_method(&o, "client_hassh_string", "ssh.hassh.string", Ts, b"")?;
            string_method(&o, "server_hassh", "ssh.hassh.server", Tc, b"")?;
            string_method(&o, "server_hassh_string", "ssh.hassh.server.string", Tc, b"")?;
        }
        "dns" => fill_dns(lua, scope, &o, t, dir)?,
        "ja3" => {
            use Direction::{ToClient as Tc, ToServer as Ts};
            string_method(&o, "ja3_get_hash", "ja3.hash", Ts, b"")?;
            string_method(&o, "ja3_get_string", "ja3.string", Ts, b"")?;
            string_method(&o, "ja3s_get_hash", "ja3s.hash", Tc, b"")?;
            string_method(&o, "ja3s_get_string", "ja3s.string", Tc, b"")?;
        }
        "tls" => fill_tls(lua, scope, &o, t)?,
        "smtp" => fill_smtp(scope, &o, t)?,
        "ntp" => fill_ntp(lua, &o, t)?,
        _ => {}
    }
    Ok(o)
}

/// `file.get_file()`: the file a `file` output script is called for, its
/// values copied (a few small ones). Digests and the type are nil where
/// they were not computed, as in Suricata.
fn file_object(lua: &Lua, f: &super::LuaFile<'_>) -> mlua::Result<Table> {
    let o = lua.create_table()?;
    for (name, v) in [("file_id", f.file_id), ("tx_id", f.tx_id), ("size", f.size)] {
        o.set(name, lua.create_function(move |_, _: mlua::MultiValue| Ok(v as i64))?)?;
    }
    let text = |v: Option<&str>| v.map(str::to_string);
    for (name, v) in [
        ("magic", text(f.magic)),
        ("md5", text(f.md5)),
        ("sha1", text(f.sha1)),
        ("sha256", text(f.sha256)),
        ("get_state", Some(f.state.to_string())),
    ] {
        o.set(name, lua.create_function(move |_, _: mlua::MultiValue| Ok(v.clone()))?)?;
    }
    let name = f.name.to_vec();
    o.set("name", lua.create_function(move |lua, _: mlua::MultiValue| lua.create_string(&name))?)?;
    let stored = f.stored;
    o.set("is_stored", lua.create_function(move |_, _: mlua::MultiValue| Ok(stored))?)?;
    Ok(o)
}

/// `suricata.ntp`'s transaction (Suricata 8.0.5): `version()`, `mode()`,
/// `stratum()` as numbers, `reference_id()` as its four bytes.
fn fill_ntp(lua: &Lua, o: &Table, t: &dyn vigil_applayer::proto::ProtoTx) -> mlua::Result<()> {
    let Some(n) = t.as_any().downcast_ref::<vigil_applayer::protocols::ntp::NtpTx>() else { return Ok(()) };
    for (name, v) in [("version", n.version), ("mode", n.mode), ("stratum", n.stratum)] {
        o.set(name, lua.create_function(move |_, _: mlua::MultiValue| Ok(i64::from(v)))?)?;
    }
    let id = n.reference_id;
    o.set("reference_id", lua.create_function(move |lua, _: mlua::MultiValue| lua.create_string(id))?)
}

/// Buffer `name` and the side it is read from when side `side` is asked
/// for (its own side when it has one).
fn buffer_side(name: &str, side: Direction) -> Option<(&'static vigil_applayer::proto::BufferDef, Direction)> {
    let (_, b) = vigil_applayer::proto::buffer(name)?;
    let side = match b.sides {
        vigil_applayer::proto::Sides::ToServer => Direction::ToServer,
        vigil_applayer::proto::Sides::ToClient => Direction::ToClient,
        vigil_applayer::proto::Sides::Both => side,
    };
    Some((b, side))
}

/// The first value of buffer `name` of side `side`.
fn first<'s>(t: &'s dyn vigil_applayer::proto::ProtoTx, name: &str, side: Direction) -> Option<&'s [u8]> {
    let (b, side) = buffer_side(name, side)?;
    t.buffer(side, b.id, 0)
}

/// Every value of buffer `name` of side `side`.
fn values<'s>(t: &'s dyn vigil_applayer::proto::ProtoTx, name: &str, side: Direction) -> Vec<&'s [u8]> {
    let Some((b, side)) = buffer_side(name, side) else { return Vec::new() };
    (0..if b.multi { 4096 } else { 1 }).map_while(|i| t.buffer(side, b.id, i)).collect()
}

/// `(nil, message)`: how Suricata's libraries say a value is missing.
fn missing(lua: &Lua, m: &str) -> mlua::Result<mlua::MultiValue> {
    (Value::Nil, m).into_lua_multi(lua)
}

/// TLS's methods, per side: the version, SNI, each side's first
/// certificate's subject, issuer, fingerprint and serial, its chain, and
/// the server certificate's validity (the client's is not kept).
fn fill_tls<'s>(
    lua: &Lua,
    scope: &'s Scope<'s, '_>,
    o: &Table,
    t: &'s dyn vigil_applayer::proto::ProtoTx,
) -> mlua::Result<()> {
    let _ = lua;
    let eve = std::rc::Rc::new(t.eve());
    for (side, who) in [(Direction::ToServer, "client"), (Direction::ToClient, "server")] {
        let e = eve.clone();
        o.set(
            format!("get_{who}_version"),
            scope.create_function(move |_, _: mlua::MultiValue| {
                Ok(e.get("version").and_then(|v| v.as_str()).map(str::to_string))
            })?,
        )?;
        o.set(
            format!("get_{who}_cert_info"),
            scope.create_function(move |lua, _: mlua::MultiValue| {
                let text = |n: &str| first(t, n, side).map(|v| String::from_utf8_lossy(v).into_owned());
                let Some(subject) = text("tls.cert_subject") else { return missing(lua, "error: no cert") };
                let version = eve_version(t);
                (version, subject, text("tls.cert_issuer"), text("tls.cert_fingerprint")).into_lua_multi(lua)
            })?,
        )?;
        o.set(
            format!("get_{who}_serial"),
            scope.create_function(move |lua, _: mlua::MultiValue| match first(t, "tls.cert_serial", side) {
                Some(v) => String::from_utf8_lossy(v).into_owned().into_lua_multi(lua),
                None => missing(lua, "error: no certificate serial"),
            })?,
        )?;
        o.set(
            format!("get_{who}_cert_chain"),
            scope.create_function(move |lua, _: mlua::MultiValue| {
                // Numbered from 0, as Suricata 8.0.6 numbers the chain.
                let chain = lua.create_table()?;
                for (i, der) in values(t, "tls.certs", side).into_iter().enumerate() {
                    let c = lua.create_table()?;
                    c.set("length", der.len() as i64)?;
                    c.set("data", lua.create_string(der)?)?;
                    chain.set(i as i64, c)?;
                }
                Ok(chain)
            })?,
        )?;
        for (when, key, what) in [("not_before", "notbefore", "NotBefore"), ("not_after", "notafter", "NotAfter")] {
            let e = eve.clone();
            o.set(
                format!("get_{who}_cert_{when}"),
                scope.create_function(move |lua, _: mlua::MultiValue| {
                    let at = (side == Direction::ToClient)
                        .then(|| e.get(key).and_then(|v| v.as_str()).and_then(epoch_of))
                        .flatten();
                    match at {
                        Some(secs) => secs.into_lua_multi(lua),
                        None => missing(lua, &format!("error: no certificate {what}")),
                    }
                })?,
            )?;
        }
    }
    o.set(
        "get_client_sni",
        scope.create_function(move |lua, _: mlua::MultiValue| match first(t, "tls.sni", Direction::ToServer) {
            Some(v) => String::from_utf8_lossy(v).into_owned().into_lua_multi(lua),
            None => missing(lua, "error: no server name indication"),
        })?,
    )?;
    Ok(())
}

/// A TLS transaction's version as its record writes it (`TLS 1.2`).
fn eve_version(t: &dyn vigil_applayer::proto::ProtoTx) -> Option<String> {
    t.eve().get("version").and_then(|v| v.as_str()).map(str::to_string)
}

/// `2018-11-28T00:00:00` (UTC) in seconds since the epoch.
fn epoch_of(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    if b.len() < 19 {
        return None;
    }
    let num = |r: std::ops::Range<usize>| s.get(r)?.parse::<i64>().ok();
    let (y, m, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (hh, mm, ss) = (num(11..13)?, num(14..16)?, num(17..19)?);
    Some(vigil_types::days_from_civil(y, m, d) * 86_400 + hh * 3600 + mm * 60 + ss)
}

/// SMTP's methods: the envelope, and the message's header fields vigil
/// keeps (`email.*` buffers: subject, from, to, cc, date, message-id,
/// x-mailer, received).
fn fill_smtp<'s>(scope: &'s Scope<'s, '_>, o: &Table, t: &'s dyn vigil_applayer::proto::ProtoTx) -> mlua::Result<()> {
    o.set(
        "get_mail_from",
        scope.create_function(move |_, _: mlua::MultiValue| {
            Ok(first(t, "smtp.mail_from", Direction::ToServer).map(|v| String::from_utf8_lossy(v).into_owned()))
        })?,
    )?;
    o.set(
        "get_rcpt_list",
        scope.create_function(move |lua, _: mlua::MultiValue| {
            lua.create_sequence_from(
                values(t, "smtp.rcpt_to", Direction::ToServer)
                    .into_iter()
                    .map(|v| String::from_utf8_lossy(v).into_owned()),
            )
        })?,
    )?;
    const FIELDS: [(&str, &str); 8] = [
        ("subject", "email.subject"),
        ("from", "email.from"),
        ("to", "email.to"),
        ("cc", "email.cc"),
        ("date", "email.date"),
        ("message-id", "email.message_id"),
        ("x-mailer", "email.x_mailer"),
        ("received", "email.received"),
    ];
    let has_message = move || FIELDS.iter().any(|(_, b)| first(t, b, Direction::ToServer).is_some());
    o.set(
        "get_mime_field",
        scope.create_function(move |lua, args: mlua::MultiValue| {
            if !has_message() {
                return missing(lua, "no mime state");
            }
            let name = last_string(&args).unwrap_or_default().to_ascii_lowercase();
            let found = FIELDS
                .iter()
                .find(|(n, _)| *n == name)
                .and_then(|(_, b)| first(t, b, Direction::ToServer).map(|v| String::from_utf8_lossy(v).into_owned()));
            match found {
                Some(v) => v.into_lua_multi(lua),
                None => missing(lua, "request mime field not found"),
            }
        })?,
    )?;
    o.set(
        "get_mime_list",
        scope.create_function(move |lua, _: mlua::MultiValue| {
            if !has_message() {
                return missing(lua, "no mime state");
            }
            let names = FIELDS.iter().filter(|(_, b)| first(t, b, Direction::ToServer).is_some()).map(|(n, _)| *n);
            lua.create_sequence_from(names)?.into_lua_multi(lua)
        })?,
    )?;
    Ok(())
}

/// The last string argument (methods are called with `:` or `.`).
fn last_string(args: &mlua::MultiValue) -> Option<String> {
    args.iter().rev().find_map(|v| match v {
        Value::String(s) => Some(s.to_string_lossy()),
        _ => None,
    })
}

/// A raw header block's fields, in order: repeated names joined with `, `
/// as libhtp joins them.
fn header_fields(raw: &[u8]) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut out: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
    for line in raw.split(|&b| b == b'\n') {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let Some(colon) = line.iter().position(|&b| b == b':') else { continue };
        let name = line[..colon].trim_ascii().to_vec();
        let value = line[colon + 1..].trim_ascii().to_vec();
        match out.iter_mut().find(|(k, _)| k.eq_ignore_ascii_case(&name)) {
            Some((_, v)) => {
                v.extend_from_slice(b", ");
                v.extend_from_slice(&value);
            }
            None => out.push((name, value)),
        }
    }
    out
}

/// DNS's methods, read from the transaction's EVE object (its query or
/// its answer, whichever this transaction is).
fn fill_dns<'s>(
    lua: &Lua,
    scope: &'s Scope<'s, '_>,
    o: &Table,
    t: &'s dyn vigil_applayer::proto::ProtoTx,
    _dir: Direction,
) -> mlua::Result<()> {
    let eve = std::rc::Rc::new(t.eve());
    let e = eve.clone();
    o.set("txid", scope.create_function(move |_, _: mlua::MultiValue| Ok(e.get("id").and_then(|v| v.as_i64())))?)?;
    let e = eve.clone();
    o.set(
        "rcode_string",
        scope.create_function(move |_, _: mlua::MultiValue| {
            Ok(e.get("rcode").and_then(|v| v.as_str()).map(str::to_string))
        })?,
    )?;
    let e = eve.clone();
    o.set(
        "rcode",
        scope.create_function(move |_, _: mlua::MultiValue| {
            Ok(e.get("rcode")
                .and_then(|v| v.as_str())
                .and_then(|r| RCODES.iter().position(|c| *c == r))
                .map(|n| n as i64))
        })?,
    )?;
    let e = eve.clone();
    // Suricata 8.0.6 answers from the request's flags, bit 0x0080 (false
    // on an answer, and on a request with RD set): kept for scripts that
    // were written against it.
    o.set(
        "recursion_desired",
        scope.create_function(move |_, _: mlua::MultiValue| {
            let request = e.get("type").and_then(|v| v.as_str()) == Some("request");
            let flags = e.get("flags").and_then(|v| v.as_str()).and_then(|f| u16::from_str_radix(f, 16).ok());
            Ok(request && flags.is_some_and(|f| f & 0x0080 != 0))
        })?,
    )?;
    let e = eve.clone();
    o.set(
        "rrname",
        scope.create_function(move |_, _: mlua::MultiValue| {
            Ok(e.get("queries")
                .and_then(|q| q.get(0))
                .or_else(|| e.get("query").and_then(|q| q.get(0)))
                .and_then(|q| q.get("rrname"))
                .and_then(|v| v.as_str())
                .map(str::to_string))
        })?,
    )?;
    for (method, key) in [("queries", "queries"), ("answers", "answers"), ("authorities", "authorities")] {
        let e = eve.clone();
        o.set(
            method,
            scope.create_function(move |lua, _: mlua::MultiValue| {
                let out = lua.create_table()?;
                let list = e.get(key).or_else(|| (key == "queries").then(|| e.get("query")).flatten());
                // Numbered from 0, as Suricata 8.0.6 numbers them (`ipairs`
                // skips the first; `pairs` sees all).
                for (i, r) in list.and_then(|l| l.as_array()).into_iter().flatten().enumerate() {
                    let row = lua.create_table()?;
                    if let Some(n) = r.get("rrname").and_then(|v| v.as_str()) {
                        row.set("rrname", n)?;
                    }
                    if let Some(t) = r.get("rrtype").and_then(|v| v.as_str()) {
                        row.set("type", t)?;
                    }
                    if let Some(ttl) = r.get("ttl").and_then(|v| v.as_i64()) {
                        row.set("ttl", ttl)?;
                    }
                    if let Some(d) = r.get("rdata").and_then(|v| v.as_str()) {
                        let ty = r.get("rrtype").and_then(|v| v.as_str()).unwrap_or("");
                        row.set(if matches!(ty, "A" | "AAAA") { "addr" } else { "rdata" }, d)?;
                    }
                    out.set(i as i64, row)?;
                }
                Ok(out)
            })?,
        )?;
    }
    let _ = lua;
    Ok(())
}

const RCODES: &[&str] = &[
    "NOERROR", "FORMERR", "SERVFAIL", "NXDOMAIN", "NOTIMP", "REFUSED", "YXDOMAIN", "YXRRSET", "NXRRSET", "NOTAUTH",
    "NOTZONE",
];

/// `suricata.base64`: standard alphabet, with and without padding.
fn fill_base64(lua: &Lua, m: &Table) -> mlua::Result<()> {
    m.set(
        "encode",
        lua.create_function(|lua, s: mlua::LuaString| lua.create_string(b64_encode(&s.as_bytes(), true)))?,
    )?;
    m.set(
        "encode_nopad",
        lua.create_function(|lua, s: mlua::LuaString| lua.create_string(b64_encode(&s.as_bytes(), false)))?,
    )?;
    for (name, pad) in [
        ("decode", Pad::Required),
        ("decode_nopad", Pad::None),
        ("decode_padopt", Pad::Optional),
        ("decode_rfc4648", Pad::Required),
        ("decode_rfc2045", Pad::Optional),
    ] {
        let rfc2045 = name == "decode_rfc2045";
        m.set(
            name,
            lua.create_function(move |lua, s: mlua::LuaString| {
                let bytes = s.as_bytes();
                // RFC 2045 bodies carry line breaks and other non-alphabet bytes, skipped.
                let cleaned: Vec<u8> = if rfc2045 {
                    bytes
                        .iter()
                        .copied()
                        .filter(|&c| crate::transform::base64_value(c).is_some() || c == b'=')
                        .collect()
                } else {
                    bytes.to_vec()
                };
                match b64_decode(&cleaned, pad) {
                    Some(v) => Ok(Value::String(lua.create_string(v)?)),
                    None => Ok(Value::Nil),
                }
            })?,
        )?;
    }
    Ok(())
}

const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

fn b64_encode(data: &[u8], pad: bool) -> Vec<u8> {
    let mut out = Vec::with_capacity(data.len().div_ceil(3) * 4);
    for chunk in data.chunks(3) {
        let n = chunk.iter().enumerate().fold(0u32, |acc, (i, &b)| acc | u32::from(b) << (16 - 8 * i));
        for i in 0..=chunk.len() {
            out.push(B64[(n >> (18 - 6 * i) & 63) as usize]);
        }
        if pad {
            out.resize(out.len() + 3 - chunk.len(), b'=');
        }
    }
    out
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Pad {
    Required,
    None,
    Optional,
}

/// Strict decoding: every byte of the alphabet, padding as `pad` says.
fn b64_decode(data: &[u8], pad: Pad) -> Option<Vec<u8>> {
    let body_len = data.iter().rposition(|&c| c != b'=').map_or(0, |p| p + 1);
    let (body, padding) = data.split_at(body_len);
    if padding.len() > 2 || body.len() % 4 == 1 {
        return None;
    }
    let padded = (body.len() + padding.len()) % 4 == 0 && !padding.is_empty();
    match pad {
        Pad::Required if body.len() % 4 != 0 && !padded => return None,
        Pad::None if !padding.is_empty() => return None,
        _ if !padding.is_empty() && !padded => return None,
        _ => {}
    }
    let mut out = Vec::with_capacity(body.len() * 3 / 4);
    for chunk in body.chunks(4) {
        let mut n = 0u32;
        for (i, &c) in chunk.iter().enumerate() {
            n |= u32::from(crate::transform::base64_value(c)?) << (18 - 6 * i);
        }
        out.extend((0..chunk.len() - 1).map(|i| (n >> (16 - 8 * i)) as u8));
    }
    Some(out)
}

/// `suricata.hashing`: SHA-256, SHA-1 and MD5, whole or by parts.
fn fill_hashing(lua: &Lua, m: &Table) -> mlua::Result<()> {
    use md5::Digest;
    fn digest<D: Digest>(data: &[u8]) -> Vec<u8> {
        D::digest(data).to_vec()
    }
    for (algo, f) in [
        ("sha256", digest::<sha2::Sha256> as fn(&[u8]) -> Vec<u8>),
        ("sha1", digest::<sha1::Sha1>),
        ("md5", digest::<md5::Md5>),
    ] {
        m.set(
            format!("{algo}_digest"),
            lua.create_function(move |lua, s: mlua::LuaString| lua.create_string(f(&s.as_bytes())))?,
        )?;
        m.set(
            format!("{algo}_hex_digest"),
            lua.create_function(move |_, s: mlua::LuaString| Ok(vigil_applayer::files::hex(&f(&s.as_bytes()))))?,
        )?;
        // A hasher buffers what it is given and hashes it at the end: the
        // data is bounded by the state's memory limit.
        m.set(
            algo,
            lua.create_function(move |lua, _: mlua::MultiValue| {
                let data = std::sync::Arc::new(std::sync::Mutex::new(Vec::<u8>::new()));
                let h = lua.create_table()?;
                let d = data.clone();
                h.set(
                    "update",
                    lua.create_function(move |lua, args: mlua::MultiValue| {
                        let s = args.iter().rev().find_map(|v| v.as_string().cloned());
                        if let Some(s) = s {
                            d.lock().unwrap_or_else(|e| e.into_inner()).extend_from_slice(&s.as_bytes());
                        }
                        let _ = lua;
                        Ok(())
                    })?,
                )?;
                let d = data.clone();
                h.set(
                    "finalize",
                    lua.create_function(move |lua, _: mlua::MultiValue| {
                        lua.create_string(f(&d.lock().unwrap_or_else(|e| e.into_inner())))
                    })?,
                )?;
                let d = data.clone();
                h.set(
                    "finalize_to_hex",
                    lua.create_function(move |_, _: mlua::MultiValue| {
                        Ok(vigil_applayer::files::hex(&f(&d.lock().unwrap_or_else(|e| e.into_inner()))))
                    })?,
                )?;
                Ok(h)
            })?,
        )?;
    }
    Ok(())
}

/// `suricata.log`: a script's messages go to vigil's log.
fn fill_log(lua: &Lua, m: &Table) -> mlua::Result<()> {
    for (name, level) in [
        ("info", "Info"),
        ("notice", "Notice"),
        ("warning", "Warning"),
        ("error", "Error"),
        ("debug", "Debug"),
        ("config", "Config"),
        ("perf", "Perf"),
    ] {
        m.set(
            name,
            lua.create_function(move |lua, args: mlua::MultiValue| {
                let text = args.iter().map(|v| v.to_string().unwrap_or_default()).collect::<Vec<_>>().join("");
                if let Some(log) = lua.app_data_ref::<Logged>() {
                    log.0.borrow_mut().push((level, text));
                }
                Ok(())
            })?,
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_round_trips_with_and_without_padding() {
        for data in [&b""[..], b"f", b"fo", b"foo", b"foob", b"fooba", b"foobar"] {
            let padded = b64_encode(data, true);
            let bare = b64_encode(data, false);
            assert_eq!(b64_decode(&padded, Pad::Required).as_deref(), Some(data));
            assert_eq!(b64_decode(&bare, Pad::None).as_deref(), Some(data));
            assert_eq!(b64_decode(&bare, Pad::Optional).as_deref(), Some(data));
            assert_eq!(b64_decode(&padded, Pad::Optional).as_deref(), Some(data));
        }
        assert_eq!(b64_encode(b"foobar", true), b"Zm9vYmFy");
        assert_eq!(b64_encode(b"fo", true), b"Zm8=");
        assert_eq!(b64_decode(b"Zm8", Pad::Required), None);
        assert_eq!(b64_decode(b"Zm8=", Pad::None), None);
        assert_eq!(b64_decode(b"Z!8=", Pad::Required), None);
    }

    #[test]
    fn header_fields_join_repeats() {
        let f = header_fields(b"Host: a\r\nX: 1\r\nx:2\r\n\r\n");
        assert_eq!(f, vec![(b"Host".to_vec(), b"a".to_vec()), (b"X".to_vec(), b"1, 2".to_vec())]);
    }
}
