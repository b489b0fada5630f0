//! What the tests that drive a Python peer share: starting it and waiting
//! until it says `ready`, and payloads written as hex text.

#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::process::{Child, ChildStdout, Command, Stdio};

/// Starts `command` with its standard output piped and waits for its first
/// line, which must be `ready`; returns the child and the rest of its
/// output.
pub fn start_ready(command: &mut Command) -> (Child, BufReader<ChildStdout>) {
    let mut peer = command.stdout(Stdio::piped()).spawn().unwrap();
    let mut out = BufReader::new(peer.stdout.take().unwrap());
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    assert_eq!(line.trim(), "ready");
    (peer, out)
}

/// `bytes` as lower-case hex digits.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The bytes of hex digits `text`.
pub fn unhex(text: &str) -> Vec<u8> {
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).expect("hex"))
        .collect()
}
