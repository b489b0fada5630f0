//! Parsing the methods' names, with the valid ones listed on a mistake.

/// The one of `all` whose `name` is `s`, or an error naming `what` was
/// asked for and listing the valid names.
pub(crate) fn by_name<T: Copy>(all: &[T], name: fn(T) -> &'static str, s: &str, what: &str) -> Result<T, String> {
    all.iter().copied().find(|&m| name(m) == s).ok_or_else(|| {
        let names: Vec<&str> = all.iter().map(|&m| name(m)).collect();
        format!("unknown {what} \"{s}\"; use one of: {}", names.join(", "))
    })
}
