//! The stand-in for a Suricata source tree that `command:` lines and `${SRCDIR}`
//! expect: `src/suricata` (a shim that execs vigil), `suricata.yaml` (the default
//! config, made only when a command needs it), and `etc/` + top-level links to the
//! suite's classification and reference configs.

use std::fs;
use std::io;
use std::os::unix::fs::{symlink, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

/// One per run of the runner; read-only once built, so tests share it.
pub struct FakeSrcDir {
    pub root: PathBuf,
    vigil: PathBuf,
    default_config: Option<PathBuf>,
    yaml: OnceLock<Result<(), String>>,
}

impl FakeSrcDir {
    pub fn create(
        root: &Path,
        vigil: &Path,
        suite_root: &Path,
        default_config: Option<&Path>,
    ) -> io::Result<FakeSrcDir> {
        fs::create_dir_all(root.join("src"))?;
        fs::create_dir_all(root.join("etc"))?;
        let shim = root.join("src").join("suricata");
        fs::write(&shim, format!("#!/bin/sh\nexec {} \"$@\"\n", shell_quote(&vigil.display().to_string())))?;
        fs::set_permissions(&shim, fs::Permissions::from_mode(0o755))?;
        for name in ["classification.config", "reference.config"] {
            let target = suite_root.join("etc").join(name);
            if target.exists() {
                // Commands use both `${SRCDIR}/etc/x` and the older `${SRCDIR}/x`.
                symlink(&target, root.join("etc").join(name))?;
                symlink(&target, root.join(name))?;
            }
        }
        Ok(FakeSrcDir {
            root: root.to_path_buf(),
            vigil: vigil.to_path_buf(),
            default_config: default_config.map(Path::to_path_buf),
            yaml: OnceLock::new(),
        })
    }

    /// Makes `${SRCDIR}/suricata.yaml`: the `--default-config` file if given, otherwise
    /// what `vigil --dump-default-config` prints. Done once, on first need.
    pub fn ensure_default_yaml(&self) -> Result<(), String> {
        self.yaml
            .get_or_init(|| {
                let dest = self.root.join("suricata.yaml");
                let text = match &self.default_config {
                    Some(path) => fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?,
                    None => {
                        let out = Command::new(&self.vigil)
                            .arg("--dump-default-config")
                            .stdin(Stdio::null())
                            .stderr(Stdio::null())
                            .output()
                            .map_err(|e| e.to_string())?;
                        if !out.status.success() || out.stdout.is_empty() {
                            return Err("vigil --dump-default-config failed".to_string());
                        }
                        out.stdout
                    }
                };
                fs::write(&dest, text).map_err(|e| e.to_string())
            })
            .clone()
    }
}

/// Single-quotes a word for `sh`.
pub fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shim_execs_vigil_with_its_arguments() {
        let base = std::env::temp_dir().join(format!("vigil-verify-srcdir-{}", std::process::id()));
        let _ = fs::remove_dir_all(&base);
        fs::create_dir_all(base.join("suite/etc")).unwrap();
        fs::write(base.join("suite/etc/classification.config"), "c").unwrap();
        let vigil = base.join("it's vigil");
        fs::write(&vigil, "#!/bin/sh\necho \"args:$*\"\n").unwrap();
        fs::set_permissions(&vigil, fs::Permissions::from_mode(0o755)).unwrap();

        let src = FakeSrcDir::create(&base.join("src"), &vigil, &base.join("suite"), None).unwrap();
        let out = Command::new(src.root.join("src/suricata")).args(["-k", "none"]).output().unwrap();
        assert_eq!(String::from_utf8_lossy(&out.stdout), "args:-k none\n");
        assert_eq!(fs::read_to_string(src.root.join("etc/classification.config")).unwrap(), "c");
        assert_eq!(fs::read_to_string(src.root.join("classification.config")).unwrap(), "c");
        assert!(!src.root.join("etc/reference.config").exists());
        // The fake vigil prints something for --dump-default-config, so that becomes the yaml.
        src.ensure_default_yaml().unwrap();
        assert_eq!(fs::read_to_string(src.root.join("suricata.yaml")).unwrap(), "args:--dump-default-config\n");
        let _ = fs::remove_dir_all(&base);
    }
}
