//! The shape of the code, read from its sources: no file of a crate
//! imports (through `use crate::…` or `use super::…`) a file that imports
//! it back, directly or around a longer circle; no library returns
//! `Result<_, String>`; no function silences clippy's
//! `too_many_arguments` or `too_many_lines` with `allow` (an `expect` with
//! its reason fails the build once it is stale); and the README's table of
//! which crate depends on which is the manifests'.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// The crates of the workspace, by folder (the binary's is `.`): the
/// members the root `Cargo.toml` lists, nested ones (`io/can`) included.
fn crates() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let manifest = fs::read_to_string(root.join("Cargo.toml")).unwrap();
    let members = manifest
        .split_once("members = [")
        .and_then(|(_, rest)| rest.split_once(']'))
        .expect("the root Cargo.toml lists the workspace's members")
        .0;
    let mut found: Vec<PathBuf> = members
        .split(',')
        .map(|m| m.trim().trim_matches('"'))
        .filter(|m| !m.is_empty())
        .map(|m| root.join(m))
        .collect();
    for dir in &found {
        assert!(
            dir.join("src").is_dir(),
            "workspace member {} has no src/",
            dir.display()
        );
    }
    found.push(root.to_path_buf());
    found.sort();
    found
}

/// A crate's folder as the messages name it (`io/can`; `tandem` for the
/// binary's).
fn crate_name(dir: &Path) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    match dir.strip_prefix(root) {
        Ok(rel) if !rel.as_os_str().is_empty() => rel.to_string_lossy().into_owned(),
        _ => "tandem".into(),
    }
}

/// Every `.rs` file under `dir`.
fn sources(dir: &Path, into: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, into);
        } else if path.extension().is_some_and(|e| e == "rs") {
            into.push(path);
        }
    }
}

/// A file's module path inside its crate (`tandem::fast` for
/// `src/tandem/fast.rs`; empty for `lib.rs` and `main.rs`).
fn module_of(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).unwrap().with_extension("");
    let mut parts: Vec<String> = rel.iter().map(|p| p.to_string_lossy().into_owned()).collect();
    if matches!(parts.last().map(String::as_str), Some("mod" | "lib" | "main")) {
        parts.pop();
    }
    parts
}

/// The text before the unit tests (`#[cfg(test)] mod tests`).
fn without_tests(text: &str) -> &str {
    text.find("#[cfg(test)]\nmod tests").map_or(text, |at| &text[..at])
}

/// The paths a `use` declaration names, its braces expanded.
fn use_paths(declaration: &str) -> Vec<String> {
    let text: String = declaration.chars().filter(|c| !c.is_whitespace()).collect();
    let Some(open) = text.find('{') else {
        return vec![text];
    };
    let prefix = &text[..open];
    let close = text.rfind('}').filter(|&c| c > open).unwrap_or(text.len());
    let inner = &text[open + 1..close];
    let (mut items, mut depth, mut item) = (Vec::new(), 0, String::new());
    for c in inner.chars() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                items.push(std::mem::take(&mut item));
                continue;
            }
            _ => {}
        }
        item.push(c);
    }
    items.push(item);
    items
        .into_iter()
        .filter(|i| !i.is_empty())
        .map(|i| format!("{prefix}{i}"))
        .collect()
}

/// The module of the crate a path inside module `from` reaches: the
/// longest prefix that is a file of the crate.
fn resolve(from: &[String], path: &str, modules: &BTreeSet<Vec<String>>) -> Option<Vec<String>> {
    let mut parts: Vec<&str> = path.split("::").collect();
    let mut base: Vec<String> = match parts.first() {
        Some(&"crate") => {
            parts.remove(0);
            Vec::new()
        }
        Some(&"super") => {
            let mut base = from.to_vec();
            while parts.first() == Some(&"super") {
                parts.remove(0);
                base.pop();
            }
            base
        }
        _ => return None,
    };
    let mut best = None;
    for part in parts {
        base.push(part.split(" as ").next().unwrap_or(part).to_string());
        if modules.contains(&base) {
            best = Some(base.clone());
        }
    }
    best
}

/// The import edges between the files of the crate at `dir`.
fn imports(dir: &Path) -> BTreeMap<Vec<String>, BTreeSet<Vec<String>>> {
    let src = dir.join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    let modules: BTreeSet<Vec<String>> = files.iter().map(|f| module_of(&src, f)).collect();
    let mut edges = BTreeMap::new();
    for file in &files {
        let from = module_of(&src, file);
        let text = fs::read_to_string(file).unwrap();
        let mut to = BTreeSet::new();
        for statement in without_tests(&text).split(';') {
            let statement = statement.trim_start();
            let declaration = ["use ", "pub use ", "pub(crate) use ", "pub(super) use "]
                .iter()
                .find_map(|p| statement.strip_prefix(p));
            for path in declaration.map(use_paths).unwrap_or_default() {
                if let Some(target) = resolve(&from, &path, &modules) {
                    // A module's own children, and the crate root, are not circles.
                    if !target.is_empty() && !target.starts_with(&from) && !from.starts_with(&target) {
                        to.insert(target);
                    }
                }
            }
        }
        edges.insert(from, to);
    }
    edges
}

/// The files that reach themselves through their imports, each circle
/// once (Tarjan's strongly connected components of two or more).
fn circles(edges: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>) -> Vec<Vec<String>> {
    struct Walk<'a> {
        edges: &'a BTreeMap<Vec<String>, BTreeSet<Vec<String>>>,
        index: BTreeMap<&'a Vec<String>, usize>,
        low: BTreeMap<&'a Vec<String>, usize>,
        stack: Vec<&'a Vec<String>>,
        found: Vec<Vec<String>>,
    }
    impl<'a> Walk<'a> {
        fn visit(&mut self, v: &'a Vec<String>) {
            let n = self.index.len();
            self.index.insert(v, n);
            self.low.insert(v, n);
            self.stack.push(v);
            for w in self.edges.get(v).into_iter().flatten() {
                if !self.index.contains_key(w) {
                    self.visit(w);
                    let low = self.low[v].min(self.low[w]);
                    self.low.insert(v, low);
                } else if self.stack.contains(&w) {
                    let low = self.low[v].min(self.index[w]);
                    self.low.insert(v, low);
                }
            }
            if self.low[v] == self.index[v] {
                let mut component = Vec::new();
                while let Some(w) = self.stack.pop() {
                    component.push(w.join("::"));
                    if w == v {
                        break;
                    }
                }
                if component.len() > 1 {
                    component.sort();
                    self.found.push(component);
                }
            }
        }
    }
    let mut walk = Walk {
        edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        found: Vec::new(),
    };
    for v in edges.keys() {
        if !walk.index.contains_key(v) {
            walk.visit(v);
        }
    }
    walk.found
}

#[test]
fn no_file_imports_a_file_that_imports_it_back() {
    let mut found = Vec::new();
    for dir in crates() {
        let name = crate_name(&dir);
        for circle in circles(&imports(&dir)) {
            found.push(format!("{name}: {}", circle.join(" ⇄ ")));
        }
    }
    assert!(
        found.is_empty(),
        "import circles (move the shared name to the file that owns it):\n{}",
        found.join("\n")
    );
}

#[test]
fn the_circle_finder_finds_a_circle() {
    let edges: BTreeMap<Vec<String>, BTreeSet<Vec<String>>> = [
        (vec!["a".to_string()], BTreeSet::from([vec!["b".to_string()]])),
        (vec!["b".to_string()], BTreeSet::from([vec!["c".to_string()]])),
        (vec!["c".to_string()], BTreeSet::from([vec!["a".to_string()]])),
        (vec!["d".to_string()], BTreeSet::from([vec!["a".to_string()]])),
    ]
    .into();
    assert_eq!(circles(&edges), [vec!["a", "b", "c"]]);
    let from = vec!["log".to_string(), "mf4_read".to_string()];
    let modules = BTreeSet::from([
        vec!["log".to_string()],
        vec!["log".to_string(), "mf4_block".to_string()],
    ]);
    let paths = use_paths("super::mf4_block::{\n    read_block, Problem,\n}");
    assert_eq!(paths, ["super::mf4_block::read_block", "super::mf4_block::Problem"]);
    assert_eq!(
        resolve(&from, &paths[0], &modules),
        Some(vec!["log".to_string(), "mf4_block".to_string()])
    );
}

/// Library files: every crate's `src/` but the binary's, the benchmarks'
/// and the fuzz targets' (which may use `anyhow` and plain messages).
fn library_files() -> Vec<PathBuf> {
    let mut files = Vec::new();
    for dir in crates() {
        if matches!(crate_name(&dir).as_str(), "tandem" | "bench" | "fuzz") {
            continue;
        }
        sources(&dir.join("src"), &mut files);
    }
    files
}

#[test]
fn libraries_return_typed_errors() {
    let mut found = Vec::new();
    for file in library_files() {
        let text = fs::read_to_string(&file).unwrap();
        let code: String = without_tests(&text).split_whitespace().collect::<Vec<_>>().join(" ");
        for (at, _) in code.match_indices(", String>") {
            let before = &code[..at];
            let Some(result) = before.rfind("Result<") else {
                continue;
            };
            // The same declaration: no statement or block between.
            if !before[result..].contains([';', '{', '}']) {
                found.push(format!("{}: …{}", file.display(), &code[result..at + 9]));
            }
        }
    }
    assert!(
        found.is_empty(),
        "Result<_, String> in a library (give it an error type with thiserror):\n{}",
        found.join("\n")
    );
}

#[test]
fn long_parameter_lists_and_long_functions_say_why() {
    let mut found = Vec::new();
    let mut files = Vec::new();
    for dir in crates() {
        for sub in ["src", "tests", "benches"] {
            if dir.join(sub).is_dir() {
                sources(&dir.join(sub), &mut files);
            }
        }
    }
    for file in files {
        let text = fs::read_to_string(&file).unwrap();
        for lint in ["too_many_arguments", "too_many_lines"] {
            if text.contains(&format!("allow(clippy::{lint})")) {
                found.push(format!("{}: {lint}", file.display()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "#[allow(clippy::…)] on a long parameter list or a long function (split it, or write \
         #[expect(…, reason = \"…\")], which fails the build once it is stale):\n{}",
        found.join("\n")
    );
}

/// The README's table of which crate depends on which: each line names
/// crates by `name (folder/…)` and, after `->`, the Tandem crates they
/// depend on by short name (`tandem-` left out), or `(no Tandem crate)`.
fn readme_dependencies() -> Vec<(String, PathBuf, BTreeSet<String>)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = fs::read_to_string(root.join("README.md")).unwrap();
    let start = readme
        .find("depend on each other only downwards:")
        .expect("the README's Layout says how the crates depend on each other");
    let block = &readme[start..];
    let block = &block[block.find("```text").expect("a text block follows") + 7..];
    let block = &block[..block.find("```").expect("the block ends")];
    let mut table = Vec::new();
    for line in block.lines().filter(|l| !l.trim().is_empty()) {
        let (crates, deps) = match line.split_once("->") {
            Some((left, right)) => (left, right.split(',').map(|d| format!("tandem-{}", d.trim())).collect()),
            None => (line.split("(no Tandem crate)").next().unwrap(), BTreeSet::new()),
        };
        for named in crates.split("),") {
            let (name, rest) = named.trim().split_once(" (").expect("each crate as `name (folder/…)`");
            let folder = rest.split([')', ',', ':']).next().unwrap().trim_end_matches('/');
            let dir = if folder == "src" {
                root.to_path_buf()
            } else {
                root.join(folder)
            };
            table.push((name.to_string(), dir, deps.clone()));
        }
    }
    table
}

/// The Tandem crates a manifest's `[dependencies]` names.
fn manifest_dependencies(dir: &Path) -> BTreeSet<String> {
    let text = fs::read_to_string(dir.join("Cargo.toml")).unwrap();
    let mut in_dependencies = false;
    let mut deps = BTreeSet::new();
    for line in text.lines() {
        if line.starts_with('[') {
            in_dependencies = line.trim() == "[dependencies]";
        } else if in_dependencies && line.starts_with("tandem-") {
            deps.insert(line.split(['.', ' ', '=']).next().unwrap().to_string());
        }
    }
    deps
}

#[test]
fn the_readme_names_each_crates_dependencies() {
    let table = readme_dependencies();
    let mut wrong = Vec::new();
    for (name, dir, said) in &table {
        let real = manifest_dependencies(dir);
        if &real != said {
            wrong.push(format!(
                "{name}: the README says {said:?}, {}/Cargo.toml has {real:?}",
                dir.display()
            ));
        }
    }
    let listed: BTreeSet<&Path> = table.iter().map(|(_, dir, _)| dir.as_path()).collect();
    for dir in crates() {
        if !listed.contains(dir.as_path()) {
            wrong.push(format!("{} is not in the README's table", dir.display()));
        }
    }
    assert!(
        wrong.is_empty(),
        "the README's Layout table is out of date:\n{}",
        wrong.join("\n")
    );
}
