//! Resolves the port expressions of tunnel decoders (`$VXLAN_PORTS`,
//! `[8472, 4789]`, `any`) against `vars.port-groups`.

use vigil_config::Vars;

/// `Ok(None)` means any port.
pub(crate) fn resolve(expr: &str, vars: &Vars) -> Result<Option<Vec<u16>>, String> {
    resolve_at(expr, vars, 0)
}

fn resolve_at(expr: &str, vars: &Vars, depth: u8) -> Result<Option<Vec<u16>>, String> {
    let expr = expr.trim();
    if depth > 8 {
        return Err(format!("{expr}: port variables nest too deep"));
    }
    if expr.eq_ignore_ascii_case("any") {
        return Ok(None);
    }
    if let Some(name) = expr.strip_prefix('$') {
        let value = vars.port_group(name).ok_or_else(|| format!("undefined port variable ${name}"))?;
        return resolve_at(value, vars, depth + 1);
    }
    if let Some(list) = expr.strip_prefix('[').and_then(|s| s.strip_suffix(']')) {
        let mut ports = Vec::new();
        for part in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            match resolve_at(part, vars, depth + 1)? {
                None => return Ok(None),
                Some(p) => ports.extend(p),
            }
        }
        return Ok(Some(ports));
    }
    let port = expr.parse::<u16>().map_err(|_| format!("{expr:?}: not a port number"))?;
    Ok(Some(vec![port]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variables_lists_and_any() {
        let vars = Vars::default();
        assert_eq!(resolve("$VXLAN_PORTS", &vars).unwrap(), Some(vec![4789]));
        assert_eq!(resolve("[8472, 4789]", &vars).unwrap(), Some(vec![8472, 4789]));
        assert_eq!(resolve("any", &vars).unwrap(), None);
        assert!(resolve("$NOPE", &vars).is_err());
        assert!(resolve("80x", &vars).is_err());
    }
}
