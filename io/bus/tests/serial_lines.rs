//! The `name=value` line protocol: parsing, formatting, and its transport
//! over pseudo-terminals, reconnection included.

mod serial_support;

use std::time::{Duration, Instant};

use serial_support::{point_link, timed, Pty, ScratchDir};
use tandem_bus::serial_lines::{
    format_line, open_lines, open_lines_with, parse_line, LineError, LineOptions, LineProblem, LineReceiver, LineSender,
};
use tandem_bus::serial_port::{Backoff, SerialOpenError};
use tandem_can::BusError;

fn fields(line: &str) -> (Option<f64>, Vec<(String, f64)>) {
    let record = parse_line(line).unwrap_or_else(|e| panic!("{line:?}: {e}"));
    assert_eq!(record.len(), record.fields().count());
    (
        record.time(),
        record.fields().map(|(n, v)| (n.to_string(), v)).collect(),
    )
}

fn owned(fields: &[(&str, f64)]) -> Vec<(String, f64)> {
    fields.iter().map(|&(n, v)| (n.to_string(), v)).collect()
}

#[test]
fn the_documented_forms_parse() {
    assert_eq!(
        fields("t=1.5 a=1,b=-2\tc=.5 , d=3e-4 # c=9 is a comment\r\n"),
        (Some(1.5), owned(&[("a", 1.0), ("b", -2.0), ("c", 0.5), ("d", 3e-4)]))
    );
    assert_eq!(
        fields("pos[1]=+2E3 plant/x[2]=-0 t=0\n"),
        (Some(0.0), owned(&[("pos[1]", 2000.0), ("plant/x[2]", -0.0)]))
    );
    for empty in [
        "",
        "\n",
        "\r\n",
        "   , \t",
        "# only a comment",
        "  # indented comment\n",
    ] {
        assert_eq!(fields(empty), (None, vec![]), "{empty:?}");
    }
    let (_, special) = fields("x=inf y=-INF z=nan w=Infinity");
    assert_eq!(special[..2], owned(&[("x", f64::INFINITY), ("y", f64::NEG_INFINITY)]));
    assert!(special[2].1.is_nan());
    assert_eq!(special[3].1, f64::INFINITY);
}

#[test]
fn format_then_parse_gives_back_every_value_bit_for_bit() {
    let values = [
        0.1,
        -0.0,
        1.0,
        1.0 / 3.0,
        1e-7,
        1234.5,
        123_456_789.0,
        1e16,
        1e300,
        f64::MAX,
        f64::MIN_POSITIVE,
        5e-324,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
    ];
    let names = ["speed", "pos[1]", "plant/x[2]", "ü", "a.b:c"];
    let fields: Vec<(&str, f64)> = values.iter().enumerate().map(|(i, &v)| (names[i % 5], v)).collect();
    for (i, chunk) in fields.chunks(5).enumerate() {
        let mut line = String::new();
        let time = (i % 2 == 0).then_some(12.345);
        format_line(&mut line, time, chunk.iter().copied()).unwrap();
        let record = parse_line(&line).unwrap_or_else(|e| panic!("{line:?}: {e}"));
        assert_eq!(record.time(), time, "{line}");
        let back: Vec<_> = record.fields().collect();
        assert_eq!(back.len(), chunk.len());
        for ((name, value), (name_back, value_back)) in chunk.iter().zip(back) {
            assert_eq!(*name, name_back);
            assert_eq!(value.to_bits(), value_back.to_bits(), "{line}: {name}");
        }
    }

    // The shortest form: plain or exponent, whichever is shorter.
    let mut line = String::new();
    let shortest = [0.1, 1e-7, 1234.5, 1e300, 1.0, 100.0, 1e16, -0.0, 2.5e-5, 1.0 / 3.0];
    let names = ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j"];
    format_line(&mut line, Some(0.5), names.into_iter().zip(shortest)).unwrap();
    assert_eq!(
        line,
        "t=0.5 a=0.1 b=1e-7 c=1234.5 d=1e300 e=1 f=100 g=1e16 h=-0 i=2.5e-5 j=0.3333333333333333"
    );
}

#[test]
fn format_refuses_names_that_would_not_parse_back() {
    for name in ["", "t", "a b", "a=b", "a#b", "a,b", "a\tb", "a\nb", "a\u{7}"] {
        let mut line = String::from("kept");
        let result = format_line(&mut line, Some(1.0), [("ok", 1.0), (name, 2.0)]);
        let error = result.expect_err(name);
        assert_eq!(error.name, name);
        assert_eq!(line, "kept", "{name:?}: the output is left as it was");
    }
}

#[test]
fn every_parse_error_names_its_column_and_problem() {
    let cases = [
        ("t=0.5, a=1 spd=1.2.3", 12, "spd=1.2.3", LineProblem::NotANumber),
        ("a=1 speed", 5, "speed", LineProblem::NotNameValue),
        ("=3", 1, "=3", LineProblem::NoName),
        ("a=1,  b=", 7, "b=", LineProblem::NoValue),
        ("a=1 b=0x10", 5, "b=0x10", LineProblem::NotANumber),
        ("a=b=1", 1, "a=b=1", LineProblem::NotANumber),
        ("t=nan a=1", 1, "t=nan", LineProblem::BadTime),
        ("a=1 t=x", 5, "t=x", LineProblem::NotANumber),
        ("a=1 b=2 a=3", 9, "a=3", LineProblem::Repeated(1)),
        ("t=1 t=2", 5, "t=2", LineProblem::Repeated(1)),
        ("a\u{1}=1", 1, "a\u{1}=1", LineProblem::BadName),
        // Columns count characters, not bytes.
        ("ü=1 ö=x", 5, "ö=x", LineProblem::NotANumber),
    ];
    for (line, column, field, problem) in cases {
        let error = parse_line(line).expect_err(line);
        assert_eq!(
            error,
            LineError {
                column,
                field: field.to_string(),
                problem
            },
            "{line:?}"
        );
    }
    assert_eq!(
        parse_line("t=0.5, a=1 spd=1.2.3").unwrap_err().to_string(),
        "column 12: \"spd=1.2.3\" is not a number"
    );
    assert_eq!(
        parse_line("a=1 b=2 a=3").unwrap_err().to_string(),
        "column 9: \"a=3\" repeats the name given at column 1"
    );
}

/// Receives one line, failing on an error or after two seconds.
fn line(rx: &mut LineReceiver) -> String {
    match rx.recv(Duration::from_secs(2)) {
        Ok(Some(line)) => line.to_string(),
        other => panic!("expected a line, got {other:?}"),
    }
}

#[test]
fn the_halves_can_move_to_their_own_threads() {
    fn send<T: Send>() {}
    send::<LineReceiver>();
    send::<LineSender>();
}

#[test]
fn lines_flow_both_ways_over_a_serial_port() {
    let missing = open_lines("/dev/tandem-no-such-sensor", 9600);
    assert!(matches!(missing, Err(SerialOpenError::Port { .. })));
    let mut device = Pty::new();
    let options = LineOptions {
        max_line: 64,
        ..LineOptions::default()
    };
    let (mut rx, mut tx) = open_lines_with(&device.path, &options).unwrap();

    device.write(b"t=0.5 a=1\r\n# comment\n\nb=2\nc=");
    assert_eq!(line(&mut rx), "t=0.5 a=1");
    assert_eq!(line(&mut rx), "# comment");
    assert_eq!(line(&mut rx), "");
    assert_eq!(line(&mut rx), "b=2");
    assert!(
        matches!(rx.recv(Duration::from_millis(50)), Ok(None)),
        "a partial line waits"
    );
    device.write(b"3\n");
    assert_eq!(line(&mut rx), "c=3");

    // Too long, then not UTF-8: each skipped with an error, then on.
    device.write(&[b'x'; 200]);
    device.write(b"\nbad=\xFF\nd=4\n");
    assert!(matches!(rx.recv(Duration::from_secs(2)), Err(BusError::Malformed(m)) if m.contains("longer than 64")));
    assert!(matches!(rx.recv(Duration::from_secs(2)), Err(BusError::Malformed(m)) if m.contains("UTF-8")));
    assert_eq!(line(&mut rx), "d=4");

    let mut record = String::new();
    format_line(&mut record, Some(2.0), [("speed", 1.25), ("pos[1]", -3e-4)]).unwrap();
    tx.send_line(&record).unwrap();
    tx.send_line("").unwrap();
    device.expect(b"t=2 speed=1.25 pos[1]=-3e-4\n\n", Duration::from_secs(2));
    assert!(matches!(tx.send_line("a=1\nb=2"), Err(BusError::Io(e)) if e.kind() == std::io::ErrorKind::InvalidInput));
}

#[test]
fn a_vanished_line_port_is_reported_and_reopened_by_itself() {
    let dir = ScratchDir::new("lines-vanish");
    let link = dir.0.join("sensor");
    let first = Pty::new();
    point_link(&link, &first.path);
    let options = LineOptions {
        baud: 9600,
        backoff: Backoff {
            initial: Duration::from_millis(600),
            max: Duration::from_secs(2),
        },
        ..LineOptions::default()
    };
    let (mut rx, mut tx) = open_lines_with(link.to_str().unwrap(), &options).unwrap();
    let status = tx.status();

    drop(first);
    point_link(&link, dir.0.join("unplugged").to_str().unwrap());
    for timeout in [200, 30, 30, 30].map(Duration::from_millis) {
        let lost = timed(timeout, "recv", || {
            rx.recv(timeout).map(|line| line.map(str::to_string))
        });
        assert!(matches!(lost, Err(BusError::Disconnected(_))), "{lost:?}");
        let lost = timed(Duration::ZERO, "send_line", || tx.send_line("a=1"));
        assert!(matches!(lost, Err(BusError::Disconnected(_))), "{lost:?}");
    }
    assert_eq!((status.is_connected(), status.disconnections()), (false, 1));

    let mut second = Pty::new();
    point_link(&link, &second.path);
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let timeout = Duration::from_millis(50);
        match timed(timeout, "recv", || {
            rx.recv(timeout).map(|line| line.map(str::to_string))
        }) {
            Err(BusError::Disconnected(_)) => {}
            Ok(None) => break,
            other => panic!("unexpected {other:?}"),
        }
        assert!(Instant::now() < deadline, "not reconnected within 5 s");
    }
    assert_eq!((status.is_connected(), status.reconnects()), (true, 1));
    second.write(b"a=2\n");
    assert_eq!(line(&mut rx), "a=2");
    tx.send_line("b=3").unwrap();
    second.expect(b"b=3\n", Duration::from_secs(2));
}
