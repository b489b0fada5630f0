//! The token where one line of a DBC statement goes wrong. The parser under
//! `can-dbc` (pest) reports where the innermost failing grammar rule began,
//! which can be several tokens before the mistake (a `;` instead of `,` in
//! `(0.5;0)` is reported at the signal's multiplexer indicator); matching
//! the line against the statement's token pattern finds the token itself.

/// What a token can be read as.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A name: letters, digits and `_`.
    Word,
    /// Digits.
    Unsigned,
    /// Digits with an optional sign.
    Integer,
    /// A decimal number, with optional sign, fraction and exponent.
    Number,
    /// A string in double quotes (or one still open at the end of the line).
    Quoted,
    /// `M`, `m<value>` or `m<value>M`.
    Multiplexer,
}

/// A token pattern.
enum Pat {
    /// A token with one of these texts; what to call it.
    Text(&'static [&'static str], &'static str),
    /// A token of this kind; what to call it.
    Of(Kind, &'static str),
    /// All of these in turn.
    Seq(&'static [Pat]),
    /// The first of these that matches.
    Alt(&'static [Pat]),
    /// This or nothing.
    Opt(&'static Pat),
    /// This any number of times.
    Rep(&'static Pat),
}

use Kind::{Integer, Multiplexer, Number, Quoted, Unsigned, Word};
use Pat::{Alt, Of, Opt, Rep, Seq, Text};

const VALUE: Pat = Alt(&[
    Of(Number, "a number or a quoted string"),
    Of(Quoted, "a number or a quoted string"),
]);

const SIGNAL: Pat = Seq(&[
    Text(&["SG_"], "`SG_`"),
    Of(Word, "the signal name"),
    Opt(&Of(Multiplexer, "a multiplexer indicator (M or m<value>)")),
    Text(&[":"], "`:`"),
    Of(Unsigned, "the start bit"),
    Text(&["|"], "`|`"),
    Of(Unsigned, "the size in bits"),
    Text(&["@"], "`@`"),
    Text(&["0", "1"], "the byte order, 1 (Intel) or 0 (Motorola)"),
    Text(&["+", "-"], "`+` (unsigned) or `-` (signed)"),
    Text(&["("], "`(`"),
    Of(Number, "the factor"),
    Text(&[","], "`,`"),
    Of(Number, "the offset"),
    Text(&[")"], "`)`"),
    Text(&["["], "`[`"),
    Of(Number, "the minimum"),
    Text(&["|"], "`|`"),
    Of(Number, "the maximum"),
    Text(&["]"], "`]`"),
    Of(Quoted, "the unit in quotes"),
    Of(Word, "a receiving node (or Vector__XXX)"),
    Rep(&Seq(&[Text(&[","], "`,`"), Of(Word, "a receiving node")])),
]);

const MESSAGE: Pat = Seq(&[
    Text(&["BO_"], "`BO_`"),
    Of(Unsigned, "the message identifier"),
    Of(Word, "the message name"),
    Text(&[":"], "`:`"),
    Of(Integer, "the length in bytes"),
    Of(Word, "the sending node (or Vector__XXX)"),
]);

const NODES: Pat = Seq(&[
    Text(&["BU_"], "`BU_`"),
    Text(&[":"], "`:`"),
    Rep(&Of(Word, "a node name")),
]);

const ATTRIBUTE_DEFINITION: Pat = Seq(&[
    Text(&["BA_DEF_"], "`BA_DEF_`"),
    Opt(&Text(
        &["BU_", "BO_", "SG_", "EV_"],
        "an object type (BU_, BO_, SG_ or EV_)",
    )),
    Of(Quoted, "the attribute name in quotes"),
    Alt(&[
        Seq(&[
            Text(&["INT", "HEX", "FLOAT"], "a type (INT, HEX, FLOAT, STRING or ENUM)"),
            Of(Number, "the minimum"),
            Of(Number, "the maximum"),
        ]),
        Text(&["STRING"], "a type (INT, HEX, FLOAT, STRING or ENUM)"),
        Seq(&[
            Text(&["ENUM"], "a type (INT, HEX, FLOAT, STRING or ENUM)"),
            Of(Quoted, "a value in quotes"),
            Rep(&Seq(&[Text(&[","], "`,`"), Of(Quoted, "a value in quotes")])),
        ]),
    ]),
    Text(&[";"], "`;`"),
]);

const ATTRIBUTE_DEFAULT: Pat = Seq(&[
    Text(&["BA_DEF_DEF_"], "`BA_DEF_DEF_`"),
    Of(Quoted, "the attribute name in quotes"),
    VALUE,
    Text(&[";"], "`;`"),
]);

const ATTRIBUTE_VALUE: Pat = Seq(&[
    Text(&["BA_"], "`BA_`"),
    Of(Quoted, "the attribute name in quotes"),
    Alt(&[
        Seq(&[Text(&["BU_"], "`BU_`"), Of(Word, "a node name"), VALUE]),
        Seq(&[Text(&["BO_"], "`BO_`"), Of(Unsigned, "a message identifier"), VALUE]),
        Seq(&[
            Text(&["SG_"], "`SG_`"),
            Of(Unsigned, "a message identifier"),
            Of(Word, "a signal name"),
            VALUE,
        ]),
        Seq(&[Text(&["EV_"], "`EV_`"), Of(Word, "a variable name"), VALUE]),
        VALUE,
    ]),
    Text(&[";"], "`;`"),
]);

const VALUE_DESCRIPTIONS: Pat = Seq(&[
    Text(&["VAL_"], "`VAL_`"),
    Opt(&Of(Unsigned, "the message identifier")),
    Of(Word, "the signal name"),
    Rep(&Seq(&[Of(Integer, "a raw value"), Of(Quoted, "its name in quotes")])),
    Opt(&Text(&[";"], "`;`")),
]);

const VALUE_TABLE: Pat = Seq(&[
    Text(&["VAL_TABLE_"], "`VAL_TABLE_`"),
    Of(Word, "the table name"),
    Rep(&Seq(&[Of(Integer, "a raw value"), Of(Quoted, "its name in quotes")])),
    Text(&[";"], "`;`"),
]);

const COMMENT: Pat = Seq(&[
    Text(&["CM_"], "`CM_`"),
    Alt(&[
        Seq(&[
            Text(&["SG_"], "`SG_`"),
            Of(Unsigned, "a message identifier"),
            Opt(&Of(Word, "a signal name")),
            Of(Quoted, "the comment in quotes"),
        ]),
        Seq(&[
            Text(&["BO_"], "`BO_`"),
            Of(Unsigned, "a message identifier"),
            Of(Quoted, "the comment in quotes"),
        ]),
        Seq(&[
            Text(&["BU_"], "`BU_`"),
            Of(Word, "a node name"),
            Of(Quoted, "the comment in quotes"),
        ]),
        Seq(&[
            Text(&["EV_"], "`EV_`"),
            Of(Word, "a variable name"),
            Of(Quoted, "the comment in quotes"),
        ]),
        Seq(&[
            Of(Unsigned, "a message identifier"),
            Of(Quoted, "the comment in quotes"),
        ]),
        Of(Quoted, "the comment in quotes"),
    ]),
    Opt(&Text(&[";"], "`;`")),
]);

const VALUE_TYPE: Pat = Seq(&[
    Text(&["SIG_VALTYPE_"], "`SIG_VALTYPE_`"),
    Of(Unsigned, "the message identifier"),
    Of(Word, "the signal name"),
    Text(&[":"], "`:`"),
    Text(&["0", "1", "2"], "0 (integer), 1 (float32) or 2 (float64)"),
    Text(&[";"], "`;`"),
]);

const VERSION: Pat = Seq(&[Text(&["VERSION"], "`VERSION`"), Of(Quoted, "the version in quotes")]);

/// The pattern of the statement that begins with `keyword`.
fn pattern(keyword: &str) -> Option<&'static Pat> {
    Some(match keyword {
        "SG_" => &SIGNAL,
        "BO_" => &MESSAGE,
        "BU_" => &NODES,
        "BA_DEF_" => &ATTRIBUTE_DEFINITION,
        "BA_DEF_DEF_" => &ATTRIBUTE_DEFAULT,
        "BA_" => &ATTRIBUTE_VALUE,
        "VAL_" => &VALUE_DESCRIPTIONS,
        "VAL_TABLE_" => &VALUE_TABLE,
        "CM_" => &COMMENT,
        "SIG_VALTYPE_" => &VALUE_TYPE,
        "VERSION" => &VERSION,
        _ => return None,
    })
}

/// A token of a line: its text and 1-based column.
struct Token<'a> {
    text: &'a str,
    col: usize,
}

impl Token<'_> {
    fn is(&self, kind: Kind) -> bool {
        let t = self.text;
        let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
        match kind {
            Word => t.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'),
            Unsigned => digits(t),
            Integer => digits(t.strip_prefix(['+', '-']).unwrap_or(t)),
            Number => number_len(t) == t.len() && !t.is_empty(),
            Quoted => t.starts_with('"'),
            Multiplexer => {
                t == "M"
                    || t.strip_prefix('m')
                        .is_some_and(|v| v.is_empty() || digits(v.strip_suffix('M').unwrap_or(v)))
            }
        }
    }
}

/// Where the statement on `line` first departs from its pattern: the
/// column and "expected X, found Y". `None` when the statement's keyword
/// has no pattern here, or the line matches it (the mistake is elsewhere).
pub(super) fn first_mistake(line: &str) -> Option<(usize, String)> {
    let tokens = tokenize(line);
    let pattern = pattern(tokens.first()?.text)?;
    let mut furthest = Furthest {
        pos: 0,
        expected: Vec::new(),
    };
    match matched(pattern, &tokens, 0, &mut furthest) {
        Some(end) if end == tokens.len() => return None,
        Some(end) => furthest.fail(end, "the end of the statement"),
        None => {}
    }
    let found = tokens.get(furthest.pos);
    let col = found.map_or(line.chars().count() + 1, |t| t.col);
    let found = found.map_or("the end of the line".to_string(), |t| format!("`{}`", t.text));
    Some((col, format!("expected {}, found {found}", list(&furthest.expected))))
}

/// The furthest token no pattern matched, and what was expected there.
struct Furthest {
    pos: usize,
    expected: Vec<&'static str>,
}

impl Furthest {
    fn fail(&mut self, pos: usize, expected: &'static str) {
        if pos > self.pos {
            self.pos = pos;
            self.expected.clear();
        }
        if pos == self.pos && !self.expected.contains(&expected) {
            self.expected.push(expected);
        }
    }
}

/// Where `pattern` matching from token `pos` ends, recording failures.
fn matched(pattern: &Pat, tokens: &[Token<'_>], pos: usize, furthest: &mut Furthest) -> Option<usize> {
    let leaf = |ok: bool, label: &'static str, furthest: &mut Furthest| {
        if ok {
            Some(pos + 1)
        } else {
            furthest.fail(pos, label);
            None
        }
    };
    match pattern {
        Text(texts, label) => leaf(
            tokens.get(pos).is_some_and(|t| texts.contains(&t.text)),
            label,
            furthest,
        ),
        Of(kind, label) => leaf(tokens.get(pos).is_some_and(|t| t.is(*kind)), label, furthest),
        Seq(parts) => parts
            .iter()
            .try_fold(pos, |at, part| matched(part, tokens, at, furthest)),
        Alt(choices) => choices.iter().find_map(|choice| matched(choice, tokens, pos, furthest)),
        Opt(part) => Some(matched(part, tokens, pos, furthest).unwrap_or(pos)),
        Rep(part) => {
            let mut at = pos;
            while let Some(next) = matched(part, tokens, at, furthest).filter(|&next| next > at) {
                at = next;
            }
            Some(at)
        }
    }
}

/// `line` split into tokens: quoted strings (to the closing quote or the
/// end of the line), numbers, words and single punctuation characters; a
/// `//` comment ends it.
fn tokenize(line: &str) -> Vec<Token<'_>> {
    let mut tokens = Vec::new();
    let mut rest = line;
    let col_of = |rest: &str| line[..line.len() - rest.len()].chars().count() + 1;
    loop {
        rest = rest.trim_start();
        if rest.is_empty() || rest.starts_with("//") {
            return tokens;
        }
        let len = if rest.starts_with('"') {
            quoted_len(rest)
        } else {
            let word = rest
                .bytes()
                .take_while(|b| b.is_ascii_alphanumeric() || *b == b'_')
                .count();
            let number = number_len(rest);
            match number.max(word) {
                0 => rest.chars().next().map_or(1, char::len_utf8),
                longest => longest,
            }
        };
        tokens.push(Token {
            text: &rest[..len],
            col: col_of(rest),
        });
        rest = &rest[len..];
    }
}

/// The length of the quoted string at the start of `s` (which begins with
/// `"`), with its closing quote; `\\"` does not close it (as for pest, even
/// after another backslash).
fn quoted_len(s: &str) -> usize {
    let mut escaped = false;
    for (i, c) in s.char_indices().skip(1) {
        match c {
            '"' if !escaped => return i + 1,
            '\\' => escaped = true,
            _ => escaped = false,
        }
    }
    s.len()
}

/// The length of the DBC number at the start of `s`: optional sign, digits
/// with an optional fraction (or a fraction alone), optional exponent.
fn number_len(s: &str) -> usize {
    let b = s.as_bytes();
    let digits = |from: usize| b[from.min(b.len())..].iter().take_while(|c| c.is_ascii_digit()).count();
    let mut i = usize::from(matches!(b.first(), Some(b'+' | b'-')));
    let whole = digits(i);
    i += whole;
    if b.get(i) == Some(&b'.') && digits(i + 1) > 0 {
        i += 1 + digits(i + 1);
    } else if whole == 0 {
        return 0;
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        let sign = usize::from(matches!(b.get(i + 1), Some(b'+' | b'-')));
        if digits(i + 1 + sign) > 0 {
            i += 1 + sign + digits(i + 1 + sign);
        }
    }
    i
}

/// "a", "a or b", "a, b or c".
fn list(items: &[&str]) -> String {
    match items {
        [] => String::new(),
        [one] => one.to_string(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
    }
}
