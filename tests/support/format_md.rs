//! The example models of `models/FORMAT.md`, shared by the tests that run
//! them (`#[path]`-included).

/// The text of each ```json block of FORMAT.md (`text`): each a complete
/// model.
pub fn format_md_models(text: &str) -> Vec<String> {
    let mut models = Vec::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        match (&mut current, line.trim_end()) {
            (None, "```json") => current = Some(String::new()),
            (Some(block), "```") => {
                models.push(std::mem::take(block));
                current = None;
            }
            (Some(block), _) => {
                block.push_str(line);
                block.push('\n');
            }
            (None, _) => {}
        }
    }
    assert!(current.is_none(), "unterminated ```json block in FORMAT.md");
    assert!(!models.is_empty(), "FORMAT.md has no ```json example");
    models
}
