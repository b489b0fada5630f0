//! Where messages, signals and tokens are in a DBC file's text, so that
//! errors can give a line and column (both 1-based, columns in characters).

use std::collections::HashMap;

/// A `BO_` line and the `SG_` lines under it.
pub(super) struct MessageSite<'a> {
    /// The message name as written.
    pub name: &'a str,
    /// The identifier as written.
    pub id: &'a str,
    /// Where the `BO_` keyword is.
    pub at: (usize, usize),
    /// Each signal's name and where its `SG_` keyword is, in file order.
    pub signals: Vec<(&'a str, (usize, usize))>,
}

impl MessageSite<'_> {
    /// Where signal number `index` of the message, called `name`, is.
    pub fn signal(&self, index: usize, name: &str) -> Option<(usize, usize)> {
        let by_index = self.signals.get(index).filter(|(n, _)| *n == name);
        by_index
            .or_else(|| self.signals.iter().find(|(n, _)| *n == name))
            .map(|(_, at)| *at)
    }
}

/// Every `BO_` line of `text`, in file order, with the `SG_` lines that
/// follow it (blank and `//` comment lines may come between them).
fn message_sites(text: &str) -> Vec<MessageSite<'_>> {
    let mut sites: Vec<MessageSite<'_>> = Vec::new();
    let mut in_message = false;
    for (index, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        let at = (index + 1, line[..line.len() - trimmed.len()].chars().count() + 1);
        if let Some(rest) = after_keyword(trimmed, "BO_") {
            let mut words = rest
                .split(|c: char| c.is_whitespace() || c == ':')
                .filter(|w| !w.is_empty());
            let id = words.next().unwrap_or("");
            let name = words.next().unwrap_or("");
            sites.push(MessageSite {
                name,
                id,
                at,
                signals: Vec::new(),
            });
            in_message = true;
        } else if let (true, Some(rest), Some(site)) = (in_message, after_keyword(trimmed, "SG_"), sites.last_mut()) {
            let name = rest
                .split(|c: char| c.is_whitespace() || c == ':')
                .find(|w| !w.is_empty());
            site.signals.push((name.unwrap_or(""), at));
        } else if !trimmed.is_empty() && !trimmed.starts_with("//") {
            in_message = false;
        }
    }
    sites
}

/// The messages of a DBC text, found by their number in file order or,
/// when that one has another name, by name.
pub(super) struct Sites<'a> {
    list: Vec<MessageSite<'a>>,
    /// The first site of each name.
    by_name: HashMap<&'a str, usize>,
}

impl<'a> Sites<'a> {
    /// The message sites of `text`.
    pub fn of(text: &'a str) -> Self {
        let list = message_sites(text);
        let mut by_name = HashMap::new();
        for (i, site) in list.iter().enumerate() {
            by_name.entry(site.name).or_insert(i);
        }
        Sites { list, by_name }
    }

    /// The site of message number `index` (in file order), called `name`.
    pub fn find(&self, index: usize, name: &str) -> Option<&MessageSite<'a>> {
        self.list
            .get(index)
            .filter(|s| s.name == name)
            .or_else(|| self.by_name.get(name).map(|&i| &self.list[i]))
    }
}

/// Where `token` first appears in `text` as a whole word (not inside a
/// longer name or number).
pub(super) fn token_at(text: &str, token: &str) -> Option<(usize, usize)> {
    if token.is_empty() {
        return None;
    }
    let is_word = |c: char| c.is_alphanumeric() || c == '_' || c == '.';
    let offset = text.match_indices(token).map(|(i, _)| i).find(|&i| {
        let before = text[..i].chars().next_back();
        let after = text[i + token.len()..].chars().next();
        !before.is_some_and(is_word) && !after.is_some_and(is_word)
    })?;
    Some(line_col(text, offset))
}

/// The line and column of byte `offset` of `text`.
fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset];
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    (
        before.matches('\n').count() + 1,
        before[line_start..].chars().count() + 1,
    )
}

/// The rest of `line` after `keyword` and the whitespace that must follow it.
fn after_keyword<'a>(line: &'a str, keyword: &str) -> Option<&'a str> {
    line.strip_prefix(keyword).filter(|rest| rest.starts_with([' ', '\t']))
}
