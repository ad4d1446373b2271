//! Procedure, operation and status names as Suricata writes them, and the
//! file handle hash its records carry.

/// Procedure numbers of the calls the parser reads, by version.
pub const V2_READ: u32 = 6;
pub const V2_WRITE: u32 = 8;
pub const V2_RENAME: u32 = 11;
pub const V3_GETATTR: u32 = 1;
pub const V3_LOOKUP: u32 = 3;
pub const V3_ACCESS: u32 = 4;
pub const V3_READ: u32 = 6;
pub const V3_WRITE: u32 = 7;
pub const V3_CREATE: u32 = 8;
pub const V3_MKDIR: u32 = 9;
pub const V3_REMOVE: u32 = 12;
pub const V3_RMDIR: u32 = 13;
pub const V3_RENAME: u32 = 14;
pub const V3_READDIRPLUS: u32 = 17;
pub const V3_COMMIT: u32 = 21;
/// NFSv4 operations.
pub const V4_COMMIT: u32 = 5;
pub const V4_CREATE: u32 = 6;
pub const V4_GETFH: u32 = 10;
pub const V4_LOOKUP: u32 = 15;
pub const V4_OPEN: u32 = 18;
pub const V4_PUTFH: u32 = 22;
pub const V4_PUTROOTFH: u32 = 24;
pub const V4_READ: u32 = 25;
pub const V4_REMOVE: u32 = 28;
pub const V4_RENAME: u32 = 29;
pub const V4_WRITE: u32 = 38;

const V2: &[&str] = &[
    "NULL", "GETATTR", "SETATTR", "ROOT", "LOOKUP", "READLINK", "READ", "WRITECACHE", "WRITE", "CREATE", "REMOVE", "RENAME", "LINK",
    "SYMLINK", "MKDIR", "RMDIR", "READDIR", "STATFS",
];

const V3: &[&str] = &[
    "NULL", "GETATTR", "SETATTR", "LOOKUP", "ACCESS", "READLINK", "READ", "WRITE", "CREATE", "MKDIR", "SYMLINK", "MKNOD", "REMOVE",
    "RMDIR", "RENAME", "LINK", "READDIR", "READDIRPLUS", "FSSTAT", "FSINFO", "PATHCONF", "COMMIT",
];

/// NFSv4 operations from 3 (4.0 and 4.1); 0 and 1 are the NULL and
/// COMPOUND procedures.
const V4: &[&str] = &[
    "ACCESS", "CLOSE", "COMMIT", "CREATE", "DELEGPURGE", "DELEGRETURN", "GETATTR", "GETFH", "LINK", "LOCK", "LOCKT", "LOCKU", "LOOKUP",
    "LOOKUPP", "NVERIFY", "OPEN", "OPENATTR", "OPEN_CONFIRM", "OPEN_DOWNGRADE", "PUTFH", "PUTPUBFH", "PUTROOTFH", "READ", "READDIR",
    "READLINK", "REMOVE", "RENAME", "RENEW", "RESTOREFH", "SAVEFH", "SECINFO", "SETATTR", "SETCLIENTID", "SETCLIENTID_CONFIRM", "VERIFY",
    "WRITE", "RELEASE_LOCKOWNER", "BACKCHANNEL_CTL", "BIND_CONN_TO_SESSION", "EXCHANGE_ID", "CREATE_SESSION", "DESTROY_SESSION",
    "FREE_STATEID", "GET_DIR_DELEGATION", "GETDEVICEINFO", "GETDEVICELIST", "LAYOUTCOMMIT", "LAYOUTGET", "LAYOUTRETURN",
    "SECINFO_NO_NAME", "SEQUENCE", "SET_SSV", "TEST_STATEID", "WANT_DELEGATION", "DESTROY_CLIENTID", "RECLAIM_COMPLETE",
];

fn table(version: u32, procedure: u32) -> Option<&'static str> {
    let i = usize::try_from(procedure).ok()?;
    match version {
        2 => V2.get(i).copied(),
        4 => match procedure {
            0 => Some("NULL"),
            1 => Some("COMPOUND"),
            _ => i.checked_sub(3).and_then(|j| V4.get(j)).copied(),
        },
        _ => V3.get(i).copied(),
    }
}

/// A procedure (an operation for NFSv4) of `version` by name, or its number.
pub fn procedure(version: u32, procedure: u32) -> String {
    table(version, procedure).map_or_else(|| procedure.to_string(), str::to_string)
}

/// The number of the procedure (operation) of `version` named `name`.
pub fn procedure_of(version: u32, name: &str) -> Option<u32> {
    (0..64).find(|&p| table(version, p).is_some_and(|n| n.eq_ignore_ascii_case(name)))
}

/// Whether `name` names a procedure or operation of any version.
pub fn known_procedure(name: &str) -> bool {
    [2, 3, 4].iter().any(|&v| procedure_of(v, name).is_some())
}

/// The procedures of `version` that read and write files, and rename them.
pub fn read_of(version: u32) -> u32 {
    match version {
        4 => V4_READ,
        _ => V3_READ,
    }
}

pub fn write_of(version: u32) -> u32 {
    match version {
        2 => V2_WRITE,
        4 => V4_WRITE,
        _ => V3_WRITE,
    }
}

pub fn rename_of(version: u32) -> u32 {
    match version {
        2 => V2_RENAME,
        4 => V4_RENAME,
        _ => V3_RENAME,
    }
}

/// An NFS status (v2 and v3 share their numbers) as logs write it.
pub fn status(s: u32) -> String {
    let name = match s {
        0 => "OK",
        1 => "ERR_PERM",
        2 => "ERR_NOENT",
        5 => "ERR_IO",
        6 => "ERR_NXIO",
        13 => "ERR_ACCES",
        17 => "ERR_EXIST",
        18 => "ERR_XDEV",
        19 => "ERR_NODEV",
        20 => "ERR_NOTDIR",
        21 => "ERR_ISDIR",
        22 => "ERR_INVAL",
        27 => "ERR_FBIG",
        28 => "ERR_NOSPC",
        30 => "ERR_ROFS",
        31 => "ERR_MLINK",
        63 => "ERR_NAMETOOLONG",
        66 => "ERR_NOTEMPTY",
        69 => "ERR_DQUOT",
        70 => "ERR_STALE",
        71 => "ERR_REMOTE",
        10001 => "ERR_BADHANDLE",
        10002 => "ERR_NOT_SYNC",
        10003 => "ERR_BAD_COOKIE",
        10004 => "ERR_NOTSUPP",
        10005 => "ERR_TOOSMALL",
        10006 => "ERR_SERVERFAULT",
        10007 => "ERR_BADTYPE",
        10008 => "ERR_JUKEBOX",
        n => return n.to_string(),
    };
    name.into()
}

/// CRC-32 (IEEE) of a file handle, in lower-case hex without leading
/// zeros: the `hhash` records carry.
pub fn hhash(handle: &[u8]) -> String {
    let mut crc = !0u32;
    for &b in handle {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 != 0 { crc >> 1 ^ 0xedb8_8320 } else { crc >> 1 };
        }
    }
    format!("{:x}", !crc)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_the_version() {
        assert_eq!(procedure(2, 17), "STATFS");
        assert_eq!(procedure(3, 17), "READDIRPLUS");
        assert_eq!(procedure(4, 38), "WRITE");
        assert_eq!(procedure(4, 2), "2");
        assert_eq!(procedure(3, 99), "99");
        assert_eq!(procedure_of(4, "write"), Some(38));
        assert_eq!(procedure_of(3, "WRITE"), Some(7));
        assert_eq!(procedure_of(2, "WRITE"), Some(8));
        assert_eq!(status(2), "ERR_NOENT");
    }

    #[test]
    fn the_handle_hash_is_crc32() {
        assert_eq!(hhash(b"\0"), "d202ef8d");
        assert_eq!(hhash(b"123456789"), "cbf43926");
    }
}
