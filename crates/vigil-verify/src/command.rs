//! `command:` tests: finding the Suricata invocations inside a shell command line so
//! their arguments can be checked against the honoured-argument table before anything
//! runs.
//!
//! This is a small POSIX-shell word splitter (quotes, escapes, line continuations,
//! `$(...)` and backticks kept whole, operators and redirections), enough to read the
//! suite's command lines; it never executes anything.

use crate::invocation::translate_args;

#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Word(String),
    /// `|`, `&&`, `;`, newline, ...: ends a simple command.
    Separator,
    /// `>`, `2>`, `<`, ...: the next word is a file, not an argument.
    Redirect,
}

fn tokenize(cmd: &str) -> Vec<Token> {
    let chars: Vec<char> = cmd.chars().collect();
    let mut tokens = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut i = 0;
    let flush = |word: &mut String, in_word: &mut bool, tokens: &mut Vec<Token>| {
        if *in_word {
            tokens.push(Token::Word(std::mem::take(word)));
            *in_word = false;
        }
    };
    while i < chars.len() {
        let c = chars[i];
        match c {
            '\\' if chars.get(i + 1) == Some(&'\n') => i += 2,
            '\\' => {
                if let Some(&next) = chars.get(i + 1) {
                    word.push(next);
                }
                in_word = true;
                i += 2;
            }
            ' ' | '\t' | '\r' => {
                flush(&mut word, &mut in_word, &mut tokens);
                i += 1;
            }
            '#' if !in_word => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
            }
            '\n' | ';' | '|' | '&' | '(' | ')' => {
                flush(&mut word, &mut in_word, &mut tokens);
                tokens.push(Token::Separator);
                i += 1;
            }
            '<' | '>' => {
                // A number right before it (`2>`) names a descriptor, not an argument.
                if in_word && word.bytes().all(|b| b.is_ascii_digit()) {
                    word.clear();
                    in_word = false;
                }
                flush(&mut word, &mut in_word, &mut tokens);
                while i < chars.len() && matches!(chars[i], '<' | '>' | '|' | '&') {
                    i += 1;
                }
                tokens.push(Token::Redirect);
            }
            '\'' => {
                in_word = true;
                i += 1;
                while i < chars.len() && chars[i] != '\'' {
                    word.push(chars[i]);
                    i += 1;
                }
                i += 1;
            }
            '"' => {
                in_word = true;
                i += 1;
                while i < chars.len() && chars[i] != '"' {
                    if chars[i] == '\\' && matches!(chars.get(i + 1), Some('$' | '`' | '"' | '\\' | '\n')) {
                        if chars[i + 1] != '\n' {
                            word.push(chars[i + 1]);
                        }
                        i += 2;
                    } else if chars[i] == '`' || (chars[i] == '$' && chars.get(i + 1) == Some(&'(')) {
                        i = copy_substitution(&chars, i, &mut word);
                    } else {
                        word.push(chars[i]);
                        i += 1;
                    }
                }
                i += 1;
            }
            '`' => {
                in_word = true;
                i = copy_substitution(&chars, i, &mut word);
            }
            '$' if chars.get(i + 1) == Some(&'(') => {
                in_word = true;
                i = copy_substitution(&chars, i, &mut word);
            }
            _ => {
                word.push(c);
                in_word = true;
                i += 1;
            }
        }
    }
    flush(&mut word, &mut in_word, &mut tokens);
    tokens
}

/// Copies a `` `...` `` or `$(...)` substitution verbatim; returns the index after it.
fn copy_substitution(chars: &[char], start: usize, word: &mut String) -> usize {
    let mut i = start;
    if chars[i] == '`' {
        word.push('`');
        i += 1;
        while i < chars.len() && chars[i] != '`' {
            word.push(chars[i]);
            i += 1;
        }
        if i < chars.len() {
            word.push('`');
            i += 1;
        }
        return i;
    }
    let mut depth = 0usize;
    while i < chars.len() {
        word.push(chars[i]);
        match chars[i] {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    return i + 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
    i
}

/// Whether a word is the Suricata binary of a `command:` line (`${SRCDIR}/src/suricata`
/// once substituted).
fn is_suricata(word: &str) -> bool {
    word == "src/suricata" || word.ends_with("/src/suricata")
}

/// The argument lists of every Suricata invocation in a (substituted) command line.
pub fn suricata_invocations(cmd: &str) -> Vec<Vec<String>> {
    let tokens = tokenize(cmd);
    let mut found = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        if matches!(&tokens[i], Token::Word(w) if is_suricata(w)) {
            let mut args = Vec::new();
            i += 1;
            while i < tokens.len() {
                match &tokens[i] {
                    Token::Word(w) => args.push(w.clone()),
                    Token::Redirect => i += 1,
                    Token::Separator => break,
                }
                i += 1;
            }
            found.push(args);
        } else {
            i += 1;
        }
    }
    found
}

/// Checks every Suricata invocation of a command line; the error fails the test.
pub fn check_command(cmd: &str) -> Result<(), String> {
    for args in suricata_invocations(cmd) {
        translate_args(&args)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn finds_arguments_across_continuations_and_quotes() {
        let cmd = "/s/src/suricata --set classification-file=\"/s/etc/c.config\" \\\n  -l /out \\\n  -c '/t/suricata.yaml' -r /t/input.pcap -S /t/test.rules\n";
        assert_eq!(
            suricata_invocations(cmd),
            vec![words(&[
                "--set",
                "classification-file=/s/etc/c.config",
                "-l",
                "/out",
                "-c",
                "/t/suricata.yaml",
                "-r",
                "/t/input.pcap",
                "-S",
                "/t/test.rules"
            ])]
        );
    }

    #[test]
    fn pipelines_prefixes_and_redirections() {
        let cmd =
            "cat /t/input.pcap | /s/src/suricata -r /dev/stdin -l /o 2> err.txt --runmode single > out 2>&1; echo done";
        assert_eq!(suricata_invocations(cmd), vec![words(&["-r", "/dev/stdin", "-l", "/o", "--runmode", "single"])]);
        let cmd = "timeout -k 5s 30s /s/src/suricata -k none --runmode single";
        assert_eq!(suricata_invocations(cmd), vec![words(&["-k", "none", "--runmode", "single"])]);
        assert!(suricata_invocations("echo hello").is_empty());
    }

    #[test]
    fn substitutions_stay_inside_their_word() {
        let cmd = "/s/src/suricata --set \"classification-file=\"/s`[ -f /s/etc/c ] && printf '/etc'`/c.config -T";
        assert_eq!(
            suricata_invocations(cmd),
            vec![words(&["--set", "classification-file=/s`[ -f /s/etc/c ] && printf '/etc'`/c.config", "-T"])]
        );
    }

    #[test]
    fn unsupported_arguments_are_reported() {
        assert_eq!(check_command("/s/src/suricata -T -c /t/suricata.yaml -vvv --dump-config"), Ok(()));
        assert_eq!(check_command("/s/src/suricata -T -c /t/suricata.yaml --list-runmodes"), Ok(()));
        assert_eq!(check_command("/s/src/suricata -T -c /t/suricata.yaml -vvv"), Ok(()));
        assert_eq!(check_command("/s/src/suricata -l /o -r x.pcap --data-dir=\"/o\""), Ok(()));
        assert_eq!(
            check_command("/s/src/suricata -l /o -r x.pcap --unix-socket"),
            Err("unsupported argument: --unix-socket".into())
        );
        assert_eq!(check_command("/s/src/suricata -S /t/blah.rules"), Ok(()));
    }
}
