//! A `can-dbc` parse failure as a [`DbcError`] with a line, column and fix.
//!
//! `can-dbc` reports pest's position: the right line, but a column where
//! the innermost failing rule began. The exact column comes from matching
//! that line against its statement's pattern ([`first_mistake`]); a string
//! left open on an earlier line (which makes pest fail lines later) is
//! found by following the quotes.

use super::error::DbcError;
use super::source::token_at;
use super::statement::first_mistake;

/// The keywords a DBC statement can begin with.
const KEYWORDS: &[&str] = &[
    "VERSION",
    "NS_",
    "BS_",
    "BU_",
    "BO_",
    "SG_",
    "CM_",
    "BA_DEF_",
    "BA_DEF_DEF_",
    "BA_",
    "VAL_",
    "VAL_TABLE_",
    "SIG_VALTYPE_",
    "SIG_GROUP_",
    "BO_TX_BU_",
    "BA_DEF_REL_",
    "BA_REL_",
    "BA_DEF_DEF_REL_",
    "SG_MUL_VAL_",
    "EV_",
    "ENVVAR_DATA_",
];

/// `error`, from parsing `text` (read from `origin`), with its position.
pub(super) fn syntax_error(text: &str, origin: &str, error: &can_dbc::DbcError) -> DbcError {
    use can_dbc::DbcError as E;
    match error {
        E::Pest(pest) => match pest_line_col(&format!("{:?}", pest.line_col)) {
            Some(at) => located(text, origin, at, &pest.variant.message()),
            None => DbcError::new(
                origin,
                None,
                format!("syntax error: {}", pest.variant.message()),
                form_of(""),
            ),
        },
        E::InvalidInt(s) | E::InvalidUint(s) | E::InvalidFloat(s) | E::InvalidNumericValue(s) => DbcError::new(
            origin,
            token_at(text, s),
            format!("number `{s}` is out of range"),
            "write a number that fits 64 bits",
        ),
        E::MessageIdOutOfRange(id) => DbcError::new(
            origin,
            token_at(text, &id.to_string()),
            format!("message identifier {id} does not fit 32 bits"),
            "write a standard identifier as 0 to 2047, an extended one as 2147483648 (0x80000000) plus the 29-bit id",
        ),
        E::UnknownMultiplexIndicator(s) => DbcError::new(
            origin,
            token_at(text, s),
            format!("`{s}` is not a multiplexer indicator"),
            "write `M` for the multiplexor or `m` and a value (`m3`) for a multiplexed signal",
        ),
        other => DbcError::new(
            origin,
            None,
            format!("the DBC parser could not read the file: {other}"),
            "check the file against the DBC format (cantools or CANdb++ can point at the statement)",
        ),
    }
}

/// The error pest reports at `(line, col)` expecting `expected`, at the
/// exact place and with the form of the statement as the fix.
fn located(text: &str, origin: &str, (line, col): (usize, usize), expected: &str) -> DbcError {
    if let Some(open) = open_string(text, line) {
        return DbcError::new(
            origin,
            Some(open),
            format!(
                "this string is not closed on its line; it runs on to line {line}, where the file stops making sense"
            ),
            "close it with `\"` (a string ends at the next `\"`, even lines later)",
        );
    }
    if let Some(list) = list_above(text, line) {
        return DbcError::new(
            origin,
            Some((line, col)),
            format!("syntax error in the indented `{list}` list"),
            "the indented lines under it hold names only: letters, digits and `_`",
        );
    }
    let statement = text.lines().nth(line - 1).unwrap_or("");
    let keyword = statement.split([' ', '\t', ':']).find(|w| !w.is_empty()).unwrap_or("");
    let fix = form_of(keyword);
    if let Some((col, mistake)) = first_mistake(statement) {
        return DbcError::new(
            origin,
            Some((line, col)),
            format!("syntax error in `{keyword}`: {mistake}"),
            fix,
        );
    }
    if !KEYWORDS.contains(&keyword) && col == statement.len() - statement.trim_start().len() + 1 {
        let fix = format!("begin the statement with a DBC keyword ({})", KEYWORDS.join(", "));
        return DbcError::new(
            origin,
            Some((line, col)),
            format!("`{keyword}` is not a DBC keyword"),
            fix,
        );
    }
    let expected = expected.replace('_', " ");
    DbcError::new(
        origin,
        Some((line, col)),
        format!("syntax error in `{keyword}`: {expected}"),
        fix,
    )
}

/// Where the string that is still open when line `line` begins was opened,
/// following the quotes from the top of `text` (inside a string, `\\"` does not
/// close it, as for pest).
fn open_string(text: &str, line: usize) -> Option<(usize, usize)> {
    let mut open = None;
    for (index, content) in text.lines().take(line - 1).enumerate() {
        let mut escaped = false;
        for (col, c) in content.chars().enumerate() {
            match (open, c) {
                (None, '/') if content.chars().nth(col + 1) == Some('/') => break,
                (None, '"') => open = Some((index + 1, col + 1)),
                (Some(_), '"') if !escaped => open = None,
                _ => {}
            }
            escaped = open.is_some() && c == '\\';
        }
    }
    open
}

/// The list (`NS_` or `BU_`) that line `line` continues, if it is one of
/// the indented lines under it.
fn list_above(text: &str, line: usize) -> Option<&'static str> {
    let lines: Vec<&str> = text.lines().take(line).collect();
    let indented = |l: &&str| l.starts_with([' ', '\t']) && !l.trim().is_empty();
    let up = lines.iter().rev().position(|l| !indented(l)).filter(|&up| up > 0)?;
    let head = lines[lines.len() - 1 - up];
    ["NS_", "BU_"].into_iter().find(|list| head.starts_with(list))
}

/// The first line and column in the `Debug` form of pest's `LineColLocation`
/// (`Pos((3, 5))` or `Span((3, 5), (3, 9))`): `can-dbc` does not re-export
/// pest's types, so the enum cannot be matched by name.
fn pest_line_col(debug: &str) -> Option<(usize, usize)> {
    let mut numbers = debug
        .split(|c: char| !c.is_ascii_digit())
        .filter(|s| !s.is_empty())
        .map(str::parse);
    match (numbers.next(), numbers.next()) {
        (Some(Ok(line)), Some(Ok(col))) if line > 0 => Some((line, col)),
        _ => None,
    }
}

/// How the statement that begins with `keyword` is written, as the fix.
fn form_of(keyword: &str) -> &'static str {
    match keyword {
        "SG_" => {
            "a signal is written `SG_ Name [M|m<value>] : StartBit|Size@<1 Intel|0 Motorola><+ unsigned|- signed> \
             (Factor,Offset) [Min|Max] \"Unit\" Receiver`"
        }
        "BO_" => "a message is written `BO_ Id Name: Length Sender`, followed by its SG_ lines",
        "BU_" => "the nodes are written `BU_: Node1 Node2`",
        "BA_" => "an attribute value is written `BA_ \"Name\" BO_ Id Value;` (or SG_ Id Signal, BU_ Node)",
        "BA_DEF_" => {
            "an attribute is defined as `BA_DEF_ BO_ \"Name\" INT Min Max;` (or FLOAT, STRING, ENUM \"A\",\"B\")"
        }
        "BA_DEF_DEF_" => "an attribute default is written `BA_DEF_DEF_ \"Name\" Value;`",
        "VAL_" => "value names are written `VAL_ Id Signal 0 \"Name0\" 1 \"Name1\";`",
        "CM_" => "a comment is written `CM_ SG_ Id Signal \"text\";` (or BO_ Id, BU_ Node, or just \"text\")",
        "SIG_VALTYPE_" => "a float signal is declared `SIG_VALTYPE_ Id Signal : 1;` (1 = float32, 2 = float64)",
        "VERSION" => "the version is written `VERSION \"text\"`",
        _ => "correct the statement at this position (compare it with the DBC format)",
    }
}
