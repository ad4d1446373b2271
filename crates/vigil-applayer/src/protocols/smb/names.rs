//! The names Suricata's EVE `smb` records give to numbers on the wire:
//! commands of both dialect families, NT status codes and DOS errors,
//! negotiated dialects, create dispositions, share types and IOCTL codes.
//! A number without a name is written as its decimal text, as Suricata does.

/// An SMB1 command; only those Suricata names (others are their number).
pub fn smb1_command(c: u8) -> Option<&'static str> {
    Some(match c {
        0x00 => "SMB1_COMMAND_CREATE_DIRECTORY",
        0x01 => "SMB1_COMMAND_DELETE_DIRECTORY",
        0x02 => "SMB1_COMMAND_OPEN",
        0x03 => "SMB1_COMMAND_CREATE",
        0x04 => "SMB1_COMMAND_CLOSE",
        0x05 => "SMB1_COMMAND_FLUSH",
        0x06 => "SMB1_COMMAND_DELETE",
        0x07 => "SMB1_COMMAND_RENAME",
        0x08 => "SMB1_COMMAND_QUERY_INFORMATION",
        0x09 => "SMB1_COMMAND_SET_INFORMATION",
        0x0a => "SMB1_COMMAND_READ",
        0x0b => "SMB1_COMMAND_WRITE",
        0x0c => "SMB1_COMMAND_LOCK_BYTE_RANGE",
        0x0d => "SMB1_COMMAND_UNLOCK_BYTE_RANGE",
        0x0e => "SMB1_COMMAND_CREATE_TEMPORARY",
        0x0f => "SMB1_COMMAND_CREATE_NEW",
        0x10 => "SMB1_COMMAND_CHECK_DIRECTORY",
        0x11 => "SMB1_COMMAND_PROCESS_EXIT",
        0x12 => "SMB1_COMMAND_SEEK",
        0x13 => "SMB1_COMMAND_LOCK_AND_READ",
        0x14 => "SMB1_COMMAND_WRITE_AND_UNLOCK",
        0x24 => "SMB1_COMMAND_LOCKING_ANDX",
        0x25 => "SMB1_COMMAND_TRANS",
        0x2b => "SMB1_COMMAND_ECHO",
        0x2c => "SMB1_COMMAND_WRITE_AND_CLOSE",
        0x2d => "SMB1_COMMAND_OPEN_ANDX",
        0x2e => "SMB1_COMMAND_READ_ANDX",
        0x2f => "SMB1_COMMAND_WRITE_ANDX",
        0x32 => "SMB1_COMMAND_TRANS2",
        0x33 => "SMB1_COMMAND_TRANS2_SECONDARY",
        0x34 => "SMB1_COMMAND_FIND_CLOSE2",
        0x71 => "SMB1_COMMAND_TREE_DISCONNECT",
        0x72 => "SMB1_COMMAND_NEGOTIATE_PROTOCOL",
        0x73 => "SMB1_COMMAND_SESSION_SETUP_ANDX",
        0x74 => "SMB1_COMMAND_LOGOFF_ANDX",
        0x75 => "SMB1_COMMAND_TREE_CONNECT_ANDX",
        0x80 => "SMB1_COMMAND_QUERY_INFO_DISK",
        0xa0 => "SMB1_COMMAND_NT_TRANS",
        0xa1 => "SMB1_COMMAND_NT_TRANS_SECONDARY",
        0xa2 => "SMB1_COMMAND_NT_CREATE_ANDX",
        0xa4 => "SMB1_COMMAND_NT_CANCEL",
        _ => return None,
    })
}

/// An SMB2/3 command.
pub fn smb2_command(c: u16) -> Option<&'static str> {
    Some(match c {
        0 => "SMB2_COMMAND_NEGOTIATE_PROTOCOL",
        1 => "SMB2_COMMAND_SESSION_SETUP",
        2 => "SMB2_COMMAND_SESSION_LOGOFF",
        3 => "SMB2_COMMAND_TREE_CONNECT",
        4 => "SMB2_COMMAND_TREE_DISCONNECT",
        5 => "SMB2_COMMAND_CREATE",
        6 => "SMB2_COMMAND_CLOSE",
        7 => "SMB2_COMMAND_FLUSH",
        8 => "SMB2_COMMAND_READ",
        9 => "SMB2_COMMAND_WRITE",
        10 => "SMB2_COMMAND_LOCK",
        11 => "SMB2_COMMAND_IOCTL",
        12 => "SMB2_COMMAND_CANCEL",
        13 => "SMB2_COMMAND_KEEPALIVE",
        14 => "SMB2_COMMAND_FIND",
        15 => "SMB2_COMMAND_CHANGE_NOTIFY",
        16 => "SMB2_COMMAND_GET_INFO",
        17 => "SMB2_COMMAND_SET_INFO",
        18 => "SMB2_COMMAND_OPLOCK_BREAK",
        _ => return None,
    })
}

/// A negotiated SMB2/3 dialect (`2.??` is the wildcard a server answers
/// an SMB1 negotiate with when it wants SMB2).
pub fn dialect(d: u16) -> String {
    match d {
        0x0202 => "2.02".into(),
        0x0210 => "2.10".into(),
        0x0222 => "2.22".into(),
        0x0224 => "2.24".into(),
        0x02ff => "2.??".into(),
        0x0300 => "3.00".into(),
        0x0302 => "3.02".into(),
        0x0310 => "3.10".into(),
        0x0311 => "3.11".into(),
        _ => d.to_string(),
    }
}

/// An NT status code.
pub fn ntstatus(s: u32) -> Option<&'static str> {
    Some(match s {
        0x0000_0000 => "STATUS_SUCCESS",
        0x0000_0103 => "STATUS_PENDING",
        0x0000_0105 => "STATUS_MORE_ENTRIES",
        0x0000_0106 => "STATUS_NOT_ALL_ASSIGNED",
        0x0000_0107 => "STATUS_SOME_NOT_MAPPED",
        0x0000_0108 => "STATUS_OPLOCK_BREAK_IN_PROGRESS",
        0x0000_010b => "STATUS_NOTIFY_CLEANUP",
        0x0000_010c => "STATUS_NOTIFY_ENUM_DIR",
        0x8000_0005 => "STATUS_BUFFER_OVERFLOW",
        0x8000_0006 => "STATUS_NO_MORE_FILES",
        0x8000_001a => "STATUS_NO_MORE_ENTRIES",
        0x8000_002d => "STATUS_STOPPED_ON_SYMLINK",
        0xc000_0001 => "STATUS_UNSUCCESSFUL",
        0xc000_0002 => "STATUS_NOT_IMPLEMENTED",
        0xc000_0003 => "STATUS_INVALID_INFO_CLASS",
        0xc000_0004 => "STATUS_INFO_LENGTH_MISMATCH",
        0xc000_0005 => "STATUS_ACCESS_VIOLATION",
        0xc000_0008 => "STATUS_INVALID_HANDLE",
        0xc000_000d => "STATUS_INVALID_PARAMETER",
        0xc000_000e => "STATUS_NO_SUCH_DEVICE",
        0xc000_000f => "STATUS_NO_SUCH_FILE",
        0xc000_0010 => "STATUS_INVALID_DEVICE_REQUEST",
        0xc000_0011 => "STATUS_END_OF_FILE",
        0xc000_0016 => "STATUS_MORE_PROCESSING_REQUIRED",
        0xc000_0017 => "STATUS_NO_MEMORY",
        0xc000_001c => "STATUS_INVALID_SYSTEM_SERVICE",
        0xc000_0022 => "STATUS_ACCESS_DENIED",
        0xc000_0023 => "STATUS_BUFFER_TOO_SMALL",
        0xc000_0024 => "STATUS_OBJECT_TYPE_MISMATCH",
        0xc000_0033 => "STATUS_OBJECT_NAME_INVALID",
        0xc000_0034 => "STATUS_OBJECT_NAME_NOT_FOUND",
        0xc000_0035 => "STATUS_OBJECT_NAME_COLLISION",
        0xc000_0039 => "STATUS_OBJECT_PATH_INVALID",
        0xc000_003a => "STATUS_OBJECT_PATH_NOT_FOUND",
        0xc000_003b => "STATUS_OBJECT_PATH_SYNTAX_BAD",
        0xc000_0043 => "STATUS_SHARING_VIOLATION",
        0xc000_004f => "STATUS_EAS_NOT_SUPPORTED",
        0xc000_0052 => "STATUS_NO_EAS_ON_FILE",
        0xc000_0054 => "STATUS_FILE_LOCK_CONFLICT",
        0xc000_0055 => "STATUS_LOCK_NOT_GRANTED",
        0xc000_0056 => "STATUS_DELETE_PENDING",
        0xc000_0061 => "STATUS_PRIVILEGE_NOT_HELD",
        0xc000_0064 => "STATUS_NO_SUCH_USER",
        0xc000_006a => "STATUS_WRONG_PASSWORD",
        0xc000_006d => "STATUS_LOGON_FAILURE",
        0xc000_006e => "STATUS_ACCOUNT_RESTRICTION",
        0xc000_006f => "STATUS_INVALID_LOGON_HOURS",
        0xc000_0071 => "STATUS_PASSWORD_EXPIRED",
        0xc000_0072 => "STATUS_ACCOUNT_DISABLED",
        0xc000_0073 => "STATUS_NONE_MAPPED",
        0xc000_0079 => "STATUS_INVALID_SECURITY_DESCR",
        0xc000_007e => "STATUS_RANGE_NOT_LOCKED",
        0xc000_007f => "STATUS_DISK_FULL",
        0xc000_009a => "STATUS_INSUFFICIENT_RESOURCES",
        0xc000_00a5 => "STATUS_BAD_IMPERSONATION_LEVEL",
        0xc000_00ac => "STATUS_PIPE_NOT_AVAILABLE",
        0xc000_00ad => "STATUS_INVALID_PIPE_STATE",
        0xc000_00ae => "STATUS_PIPE_BUSY",
        0xc000_00af => "STATUS_ILLEGAL_FUNCTION",
        0xc000_00b0 => "STATUS_PIPE_DISCONNECTED",
        0xc000_00b1 => "STATUS_PIPE_CLOSING",
        0xc000_00b5 => "STATUS_IO_TIMEOUT",
        0xc000_00ba => "STATUS_FILE_IS_A_DIRECTORY",
        0xc000_00bb => "STATUS_NOT_SUPPORTED",
        0xc000_00bd => "STATUS_DUPLICATE_NAME",
        0xc000_00c3 => "STATUS_INVALID_NETWORK_RESPONSE",
        0xc000_00c9 => "STATUS_NETWORK_NAME_DELETED",
        0xc000_00ca => "STATUS_NETWORK_ACCESS_DENIED",
        0xc000_00cb => "STATUS_BAD_DEVICE_TYPE",
        0xc000_00cc => "STATUS_BAD_NETWORK_NAME",
        0xc000_00d0 => "STATUS_REQUEST_NOT_ACCEPTED",
        0xc000_00d4 => "STATUS_NOT_SAME_DEVICE",
        0xc000_00d5 => "STATUS_FILE_RENAMED",
        0xc000_00d9 => "STATUS_PIPE_EMPTY",
        0xc000_00e3 => "STATUS_INVALID_OPLOCK_PROTOCOL",
        0xc000_00fb => "STATUS_REDIRECTOR_NOT_STARTED",
        0xc000_0101 => "STATUS_DIRECTORY_NOT_EMPTY",
        0xc000_0103 => "STATUS_NOT_A_DIRECTORY",
        0xc000_011f => "STATUS_TOO_MANY_OPENED_FILES",
        0xc000_0120 => "STATUS_CANCELLED",
        0xc000_0121 => "STATUS_CANNOT_DELETE",
        0xc000_0123 => "STATUS_FILE_DELETED",
        0xc000_0128 => "STATUS_FILE_CLOSED",
        0xc000_0148 => "STATUS_INVALID_LEVEL",
        0xc000_014b => "STATUS_PIPE_BROKEN",
        0xc000_0184 => "STATUS_INVALID_DEVICE_STATE",
        0xc000_019c => "STATUS_FS_DRIVER_REQUIRED",
        0xc000_0203 => "STATUS_USER_SESSION_DELETED",
        0xc000_0225 => "STATUS_NOT_FOUND",
        0xc000_026e => "STATUS_VOLUME_DISMOUNTED",
        0xc000_0275 => "STATUS_NOT_A_REPARSE_POINT",
        0xc000_035c => "STATUS_NETWORK_SESSION_EXPIRED",
        _ => return None,
    })
}

/// An SMB1 DOS error: its class (1: DOS, 2: server) and code.
pub fn dos_error(class: u8, code: u16) -> String {
    let named = match (class, code) {
        (1, 0) => Some("DOS_SUCCESS"),
        (1, 1) => Some("DOS_BAD_FUNC"),
        (1, 2) => Some("DOS_BAD_FILE"),
        (1, 3) => Some("DOS_BAD_PATH"),
        (1, 4) => Some("DOS_TOO_MANY_OPEN_FILES"),
        (1, 5) => Some("DOS_ACCESS_DENIED"),
        (2, 1) => Some("SRV_ERROR"),
        (2, 2) => Some("SRV_BADPW"),
        (2, 3) => Some("SRV_BADTYPE"),
        (2, 4) => Some("SRV_ACCESS"),
        (2, 91) => Some("SRV_BADUID"),
        _ => None,
    };
    match (named, class) {
        (Some(n), _) => n.into(),
        (None, 1 | 2) => code.to_string(),
        (None, _) => format!("UNKNOWN_{class:02x}_{code:04x}"),
    }
}

/// A create's disposition.
pub fn disposition(d: u32) -> String {
    match d {
        0 => "FILE_SUPERSEDE".into(),
        1 => "FILE_OPEN".into(),
        2 => "FILE_CREATE".into(),
        3 => "FILE_OPEN_IF".into(),
        4 => "FILE_OVERWRITE".into(),
        5 => "FILE_OVERWRITE_IF".into(),
        _ => d.to_string(),
    }
}

/// An SMB2 tree's share type.
pub fn share_type(t: u8) -> String {
    match t {
        1 => "FILE".into(),
        2 => "PIPE".into(),
        3 => "PRINT".into(),
        _ => "UNKNOWN".into(),
    }
}

/// The FSCTL (file system control) code of an IOCTL.
pub fn fsctl(c: u32) -> String {
    let n = match c {
        0x0006_0194 => "FSCTL_DFS_GET_REFERRALS",
        0x0006_01b0 => "FSCTL_DFS_GET_REFERRALS_EX",
        0x0009_009c => "FSCTL_GET_OBJECT_ID",
        0x0009_00a4 => "FSCTL_SET_REPARSE_POINT",
        0x0009_00a8 => "FSCTL_GET_REPARSE_POINT",
        0x0009_00c0 => "FSCTL_CREATE_OR_GET_OBJECT_ID",
        0x0009_00c4 => "FSCTL_SET_SPARSE",
        0x0009_40cf => "FSCTL_QUERY_ALLOCATED_RANGES",
        0x0009_80c8 => "FSCTL_SET_ZERO_DATA",
        0x0009_8208 => "FSCTL_FILE_LEVEL_TRIM",
        0x0011_0018 => "FSCTL_PIPE_WAIT",
        0x0011_400c => "FSCTL_PIPE_PEEK",
        0x0011_c017 => "FSCTL_PIPE_TRANSCEIVE",
        0x0014_0078 => "FSCTL_SRV_REQUEST_RESUME_KEY",
        0x0014_01d4 => "FSCTL_LMR_REQUEST_RESILIENCY",
        0x0014_01fc => "FSCTL_QUERY_NETWORK_INTERFACE_INFO",
        0x0014_0204 => "FSCTL_VALIDATE_NEGOTIATE_INFO",
        0x0014_4064 => "FSCTL_SRV_ENUMERATE_SNAPSHOTS",
        0x0014_40f2 => "FSCTL_SRV_COPYCHUNK",
        0x0014_41bb => "FSCTL_SRV_READ_HASH",
        0x0014_80f2 => "FSCTL_SRV_COPYCHUNK_WRITE",
        _ => return c.to_string(),
    };
    n.into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_without_names_are_written_as_numbers() {
        assert_eq!(smb1_command(0x26), None);
        assert_eq!(smb2_command(14), Some("SMB2_COMMAND_FIND"));
        assert_eq!(dos_error(0, 0), "UNKNOWN_00_0000");
        assert_eq!(dos_error(2, 1), "SRV_ERROR");
        assert_eq!(dos_error(1, 99), "99");
        assert_eq!(dialect(0x0311), "3.11");
        assert_eq!(fsctl(0x0011_c017), "FSCTL_PIPE_TRANSCEIVE");
        assert_eq!(fsctl(7), "7");
    }
}
