//! Finding the dotted key (`virtual_clock.implicit_delays[0].at`) that an
//! error of the TOML reader is about, from its byte offset.

use std::ops::Range;

use toml::de::{DeTable, DeValue};

// Finding the key of an error from the TOML reader.

/// A key as written in a dotted path: bare when it can be, else quoted.
pub(crate) fn key_segment(key: &str) -> String {
    let bare = !key.is_empty() && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if bare {
        key.to_string()
    } else {
        format!("{key:?}")
    }
}

/// The dotted path of the innermost key or value whose span holds byte
/// `offset`, as `virtual_clock.implicit_delays[0].at`; else (a syntax error
/// past a value) of the last key before `offset` on its line.
pub(crate) fn key_at(text: &str, offset: usize) -> Option<String> {
    let (table, _) = DeTable::parse_recoverable(text);
    let line_start = text
        .get(..offset)
        .and_then(|before| before.rfind('\n'))
        .map_or(0, |i| i + 1);
    let mut best = Best {
        offset,
        line_start,
        found: None,
    };
    best.table(table.get_ref(), "", 0);
    best.found.map(|(_, path)| path)
}

/// The search of [`key_at`].
struct Best {
    offset: usize,
    line_start: usize,
    /// (whether the span holds the offset, depth), and the path.
    found: Option<((bool, usize), String)>,
}

impl Best {
    fn holds(&self, span: &Range<usize>) -> bool {
        span.contains(&self.offset) || (span.is_empty() && span.start == self.offset)
    }

    /// Keeps `path` if it ranks above the match so far.
    fn consider(&mut self, rank: (bool, usize), path: &str) {
        if self.found.as_ref().is_none_or(|(r, _)| rank > *r) {
            self.found = Some((rank, path.to_string()));
        }
    }

    fn table(&mut self, table: &DeTable<'_>, prefix: &str, depth: usize) {
        for (key, value) in table.iter() {
            let segment = key_segment(key.get_ref());
            let path = if prefix.is_empty() {
                segment
            } else {
                format!("{prefix}.{segment}")
            };
            if self.holds(&key.span()) || self.holds(&value.span()) {
                self.consider((true, depth + 1), &path);
            } else if (self.line_start..=self.offset).contains(&key.span().start) {
                self.consider((false, depth + 1), &path);
            }
            self.value(value.get_ref(), &path, depth + 1);
        }
    }

    fn value(&mut self, value: &DeValue<'_>, path: &str, depth: usize) {
        match value {
            DeValue::Table(table) => self.table(table, path, depth),
            DeValue::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    let path = format!("{path}[{i}]");
                    if self.holds(&item.span()) {
                        self.consider((true, depth + 1), &path);
                    }
                    self.value(item.get_ref(), &path, depth + 1);
                }
            }
            _ => {}
        }
    }
}
