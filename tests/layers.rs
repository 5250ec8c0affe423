//! The architecture checks itself: every file of the library is parsed (with `syn`), every
//! reference it makes to another module of the crate is collected (`use` items, paths such as
//! `crate::engine::Engine` or `super::x`, and a parent naming its child module), and the rules
//! of docs/architecture.md are checked on the resulting graph:
//!
//! - no import cycle between files, directly or around a loop;
//! - each layer imports only the layers below it (the table in [`RULES`]);
//! - the store never imports the engine's model or ops; tools never use hyper's server;
//! - no folder's own files add up to more than 3,000 lines; every file opens with a `//!` line
//!   naming its layer.
//!
//! The checker runs on the real tree and, in the `*_are_caught` tests, on small made-up trees
//! that break each rule, so that it is known to fail when it should.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use syn::visit::Visit;

/// A module path inside the crate, e.g. `["engine", "store", "writer"]`; the root is `[]`.
type ModPath = Vec<String>;

/// Which other layers each layer may import, by path prefix (a layer may always import
/// itself).
const RULES: &[(&str, &[&str])] = &[
    ("error", &[]),
    ("command", &["error"]),
    ("wire", &["command", "error"]),
    ("engine", &["command", "error"]),
    ("tools", &["engine", "command", "error"]),
    ("admin", &["tools", "engine", "wire", "command", "error"]),
    ("http", &["admin", "engine", "wire", "command", "error"]),
    // The options tree holds each part's options where that part lives: the front door's in
    // http, the engine's in engine, the metrics' in tools.
    ("config", &["http", "engine", "tools"]),
];

/// Floors inside a layer: files under the first prefix never import the others.
const BARRIERS: &[(&str, &[&str])] = &[
    ("engine::store", &["engine::model", "engine::ops"]),
    ("engine::model", &["engine::ops"]),
];

/// External paths a layer must never use.
const FORBIDDEN_EXTERNAL: &[(&str, &[&str])] = &[
    (
        "tools",
        &["hyper::server", "hyper_util::server", "hyper::service"],
    ),
    ("engine", &["hyper", "hyper_util", "quick_xml"]),
    ("wire", &["hyper", "hyper_util", "redb"]),
    ("command", &["hyper", "redb", "tokio"]),
];

/// The most lines a folder's own `.rs` files may add up to.
const FOLDER_LIMIT: usize = 3000;

/// The word each layer's `//!` line starts with.
const LAYER_WORDS: &[(&str, &str)] = &[
    ("http", "HTTP layer"),
    ("admin", "Admin layer"),
    ("tools", "Tools layer"),
    ("engine", "Engine layer"),
    ("wire", "Wire layer"),
    ("command", "Command layer"),
];

/// One parsed file: where it sits, its lines, and what it refers to.
struct FileInfo {
    module: ModPath,
    lines: usize,
    first_line: String,
    /// Crate modules referred to (resolved to the longest known module prefix).
    refs: BTreeSet<ModPath>,
    /// External paths used, e.g. `hyper::server::conn`.
    external: BTreeSet<String>,
}

/// A crate's files, by path relative to `src/`.
type Tree = BTreeMap<String, String>;

fn module_of(rel: &str) -> ModPath {
    let mut parts: Vec<String> = rel
        .trim_end_matches(".rs")
        .split('/')
        .map(str::to_owned)
        .collect();
    if parts.last().is_some_and(|p| p == "mod" || p == "lib") {
        parts.pop();
    }
    parts
}

/// Collects the raw paths a file mentions, with the inline module they sit in.
#[derive(Default)]
struct Collector {
    /// The inline modules around the current item (`mod tests { … }`).
    inline: Vec<String>,
    /// (inline module stack, path segments) of every `use` leaf and every path.
    paths: Vec<(Vec<String>, Vec<String>)>,
    /// Child modules declared with `mod name;` (file children) or `mod name { … }`.
    declared: BTreeSet<(Vec<String>, String)>,
}

impl Collector {
    fn use_tree(&mut self, prefix: &mut Vec<String>, tree: &syn::UseTree) {
        match tree {
            syn::UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                self.use_tree(prefix, &p.tree);
                prefix.pop();
            }
            syn::UseTree::Name(n) => {
                let mut full = prefix.clone();
                let name = n.ident.to_string();
                if name != "self" {
                    full.push(name);
                }
                self.paths.push((self.inline.clone(), full));
            }
            syn::UseTree::Rename(r) => {
                let mut full = prefix.clone();
                full.push(r.ident.to_string());
                self.paths.push((self.inline.clone(), full));
            }
            syn::UseTree::Glob(_) => self.paths.push((self.inline.clone(), prefix.clone())),
            syn::UseTree::Group(g) => {
                for t in &g.items {
                    self.use_tree(prefix, t);
                }
            }
        }
    }
}

impl<'ast> Visit<'ast> for Collector {
    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        let mut prefix = Vec::new();
        if u.leading_colon.is_some() {
            prefix.push("::".to_owned());
        }
        self.use_tree(&mut prefix, &u.tree);
    }

    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        self.declared
            .insert((self.inline.clone(), m.ident.to_string()));
        if m.content.is_some() {
            self.inline.push(m.ident.to_string());
            syn::visit::visit_item_mod(self, m);
            self.inline.pop();
        }
    }

    fn visit_path(&mut self, p: &'ast syn::Path) {
        let segs: Vec<String> = p.segments.iter().map(|s| s.ident.to_string()).collect();
        if segs.len() > 1 {
            self.paths.push((self.inline.clone(), segs));
        }
        syn::visit::visit_path(self, p);
    }

    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        // Paths inside macro calls (`format!("{}", crate::x::Y)`, `matches!(…)`) are tokens,
        // not syntax; parse what parses as expressions so their paths count too.
        if let Ok(args) = m.parse_body_with(
            syn::punctuated::Punctuated::<syn::Expr, syn::Token![,]>::parse_terminated,
        ) {
            for a in &args {
                self.visit_expr(a);
            }
        }
        syn::visit::visit_macro(self, m);
    }
}

/// Parses every file of `tree` and resolves what each refers to.
fn analyse(tree: &Tree) -> BTreeMap<String, FileInfo> {
    let mut parsed = BTreeMap::new();
    for (rel, text) in tree {
        let file = syn::parse_file(text).unwrap_or_else(|e| panic!("{rel}: {e}"));
        let mut c = Collector::default();
        c.visit_file(&file);
        parsed.insert(rel.clone(), c);
    }
    // Every module that exists: files, and inline modules inside them.
    let mut modules: BTreeMap<ModPath, String> = BTreeMap::new();
    for (rel, c) in &parsed {
        let base = module_of(rel);
        modules.insert(base.clone(), rel.clone());
        for (inline, name) in &c.declared {
            let mut m = base.clone();
            m.extend(inline.iter().cloned());
            m.push(name.clone());
            modules.entry(m).or_insert_with(|| rel.clone());
        }
    }
    let mut out = BTreeMap::new();
    for (rel, c) in parsed {
        let base = module_of(&rel);
        let mut refs = BTreeSet::new();
        let mut external = BTreeSet::new();
        for (inline, segs) in &c.paths {
            let mut here = base.clone();
            here.extend(inline.iter().cloned());
            let Some(first) = segs.first() else { continue };
            let target: Option<ModPath> = match first.as_str() {
                "crate" => Some(segs[1..].to_vec()),
                "super" | "self" => {
                    let mut m = here.clone();
                    let mut rest = segs.as_slice();
                    while let Some(s) = rest.first() {
                        match s.as_str() {
                            "super" => {
                                m.pop();
                            }
                            "self" => {}
                            _ => break,
                        }
                        rest = &rest[1..];
                    }
                    m.extend(rest.iter().cloned());
                    Some(m)
                }
                name if c.declared.contains(&(inline.clone(), name.to_owned())) => {
                    let mut m = here.clone();
                    m.extend(segs.iter().cloned());
                    Some(m)
                }
                "::" => {
                    external.insert(segs[1..].join("::"));
                    None
                }
                _ => {
                    external.insert(segs.join("::"));
                    None
                }
            };
            let Some(target) = target else { continue };
            // The longest prefix that is a module, then the file that holds it.
            let resolved = (0..=target.len())
                .rev()
                .map(|n| target[..n].to_vec())
                .find(|p| modules.contains_key(p));
            if let Some(m) = resolved {
                let file_module = module_of(&modules[&m]);
                if file_module != base {
                    refs.insert(file_module);
                }
            }
        }
        out.insert(
            rel.clone(),
            FileInfo {
                module: base,
                lines: tree[&rel].lines().count(),
                first_line: tree[&rel].lines().next().unwrap_or_default().to_owned(),
                refs,
                external,
            },
        );
    }
    out
}

fn name(m: &[String]) -> String {
    if m.is_empty() {
        "crate".to_owned()
    } else {
        m.join("::")
    }
}

fn has_prefix(m: &[String], prefix: &str) -> bool {
    let p: Vec<&str> = prefix.split("::").collect();
    m.len() >= p.len() && m.iter().zip(&p).all(|(a, b)| a == b)
}

/// Every cycle in the file graph, as the files of each strongly connected component.
fn cycles(files: &BTreeMap<String, FileInfo>) -> Vec<Vec<String>> {
    let nodes: Vec<&ModPath> = files.values().map(|f| &f.module).collect();
    let index: BTreeMap<&ModPath, usize> = nodes.iter().enumerate().map(|(i, m)| (*m, i)).collect();
    let edges: Vec<Vec<usize>> = files
        .values()
        .map(|f| {
            f.refs
                .iter()
                .filter_map(|r| index.get(r).copied())
                .collect()
        })
        .collect();
    // Tarjan's algorithm, iteratively deep enough for a crate.
    struct T<'a> {
        edges: &'a [Vec<usize>],
        idx: Vec<Option<usize>>,
        low: Vec<usize>,
        on: Vec<bool>,
        stack: Vec<usize>,
        next: usize,
        out: Vec<Vec<usize>>,
    }
    fn visit(t: &mut T<'_>, v: usize) {
        t.idx[v] = Some(t.next);
        t.low[v] = t.next;
        t.next += 1;
        t.stack.push(v);
        t.on[v] = true;
        for &w in &t.edges[v] {
            match t.idx[w] {
                None => {
                    visit(t, w);
                    t.low[v] = t.low[v].min(t.low[w]);
                }
                Some(iw) if t.on[w] => t.low[v] = t.low[v].min(iw),
                Some(_) => {}
            }
        }
        if Some(t.low[v]) == t.idx[v] {
            let mut comp = Vec::new();
            while let Some(w) = t.stack.pop() {
                t.on[w] = false;
                comp.push(w);
                if w == v {
                    break;
                }
            }
            if comp.len() > 1 {
                t.out.push(comp);
            }
        }
    }
    let n = nodes.len();
    let mut t = T {
        edges: &edges,
        idx: vec![None; n],
        low: vec![0; n],
        on: vec![false; n],
        stack: Vec::new(),
        next: 0,
        out: Vec::new(),
    };
    for v in 0..n {
        if t.idx[v].is_none() {
            visit(&mut t, v);
        }
    }
    t.out
        .into_iter()
        .map(|c| {
            let mut names: Vec<String> = c.into_iter().map(|i| name(nodes[i])).collect();
            names.sort();
            names
        })
        .collect()
}

/// Every broken layering rule, as a sentence.
fn layer_violations(files: &BTreeMap<String, FileInfo>) -> Vec<String> {
    let mut out = Vec::new();
    for (rel, f) in files {
        if let Some((layer, allowed)) = RULES.iter().find(|(p, _)| has_prefix(&f.module, p)) {
            for r in &f.refs {
                if !has_prefix(r, layer) && !allowed.iter().any(|a| has_prefix(r, a)) {
                    out.push(format!("{rel} ({layer}) imports {}", name(r)));
                }
            }
        }
        for (floor, below) in BARRIERS {
            if !has_prefix(&f.module, floor) {
                continue;
            }
            for r in f
                .refs
                .iter()
                .filter(|r| below.iter().any(|b| has_prefix(r, b)))
            {
                out.push(format!("{rel} ({floor}) imports {}", name(r)));
            }
        }
        for (l, banned) in FORBIDDEN_EXTERNAL {
            if !has_prefix(&f.module, l) {
                continue;
            }
            for e in &f.external {
                if banned
                    .iter()
                    .any(|b| e == b || e.starts_with(&format!("{b}::")))
                {
                    out.push(format!("{rel} ({l}) uses {e}"));
                }
            }
        }
    }
    out
}

/// Folders over the size limit, and files without their layer's `//!` line.
fn shape_violations(files: &BTreeMap<String, FileInfo>) -> Vec<String> {
    let mut out = Vec::new();
    let mut per_folder: BTreeMap<String, usize> = BTreeMap::new();
    for (rel, f) in files {
        let folder = rel.rsplit_once('/').map_or("", |(d, _)| d).to_owned();
        *per_folder.entry(folder).or_default() += f.lines;
        if !f.first_line.starts_with("//! ") {
            out.push(format!("{rel} does not open with a //! line"));
        }
        if let Some((_, word)) = LAYER_WORDS.iter().find(|(l, _)| has_prefix(&f.module, l))
            && !f.first_line.starts_with(&format!("//! {word}"))
        {
            out.push(format!("{rel} does not say \"{word}\" in its first line"));
        }
    }
    for (folder, lines) in per_folder {
        if lines > FOLDER_LIMIT {
            out.push(format!(
                "src/{folder}/ holds {lines} lines in its own files (limit {FOLDER_LIMIT})"
            ));
        }
    }
    out
}

/// The library's files (the binary's `main.rs` and `ctl.rs` are a crate of their own).
fn library() -> Tree {
    fn walk(dir: &Path, root: &Path, out: &mut Tree) {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
            .expect("src/ is readable")
            .map(|e| e.expect("entry").path())
            .collect();
        entries.sort();
        for p in entries {
            if p.is_dir() {
                walk(&p, root, out);
            } else if p.extension().is_some_and(|e| e == "rs") {
                let rel = p
                    .strip_prefix(root)
                    .expect("under src")
                    .to_string_lossy()
                    .replace('\\', "/");
                if rel != "main.rs" && rel != "ctl.rs" {
                    out.insert(rel, std::fs::read_to_string(&p).expect("readable"));
                }
            }
        }
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut out = Tree::new();
    walk(&root, &root, &mut out);
    out
}

#[test]
fn src_has_no_import_cycle() {
    let files = analyse(&library());
    assert!(files.len() > 50, "found only {} files", files.len());
    let found = cycles(&files);
    assert!(
        found.is_empty(),
        "import cycles (each line is a set of files that import each other around a loop):\n{}",
        found
            .iter()
            .map(|c| c.join(", "))
            .collect::<Vec<_>>()
            .join("\n")
    );
}

#[test]
fn each_layer_imports_only_what_it_may() {
    let files = analyse(&library());
    let bad = layer_violations(&files);
    assert!(bad.is_empty(), "layering broken:\n{}", bad.join("\n"));
}

#[test]
fn folders_stay_small_and_files_name_their_layer() {
    let files = analyse(&library());
    let bad = shape_violations(&files);
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

fn tree(files: &[(&str, &str)]) -> Tree {
    files
        .iter()
        .map(|(p, t)| ((*p).to_owned(), (*t).to_owned()))
        .collect()
}

#[test]
fn cycles_are_caught_directly_through_a_parent_and_around_a_loop() {
    let direct = tree(&[
        ("lib.rs", "//! x\nmod a;\nmod b;"),
        ("a.rs", "//! x\nuse crate::b::B;\npub struct A;"),
        ("b.rs", "//! x\npub struct B(crate::a::A);"),
    ]);
    assert_eq!(cycles(&analyse(&direct)), [vec!["a", "b"]]);
    let parent = tree(&[
        ("lib.rs", "//! x\nmod p;"),
        ("p/mod.rs", "//! x\nmod c;\npub use c::C;\npub struct P;"),
        ("p/c.rs", "//! x\nuse super::P;\npub struct C(P);"),
    ]);
    assert_eq!(cycles(&analyse(&parent)), [vec!["p", "p::c"]]);
    let around = tree(&[
        ("lib.rs", "//! x\nmod a;\nmod b;\nmod c;"),
        ("a.rs", "//! x\nfn f() { let _ = crate::b::g(); }"),
        ("b.rs", "//! x\npub fn g() { super::c::h() }"),
        (
            "c.rs",
            "//! x\npub fn h() { format!(\"{}\", crate::a::X); }",
        ),
    ]);
    assert_eq!(cycles(&analyse(&around)), [vec!["a", "b", "c"]]);
    let fine = tree(&[
        ("lib.rs", "//! x\nmod p;"),
        ("p/mod.rs", "//! x\nmod c;\nmod d;\npub use c::C;"),
        (
            "p/c.rs",
            "//! x\nuse super::d::D;\npub struct C(D);\n#[cfg(test)]\nmod tests { use super::*; }",
        ),
        ("p/d.rs", "//! x\npub struct D;"),
    ]);
    assert!(cycles(&analyse(&fine)).is_empty());
}

#[test]
fn forbidden_imports_are_caught() {
    let bad = tree(&[
        (
            "lib.rs",
            "//! x\nmod engine;\nmod wire;\nmod http;\nmod tools;",
        ),
        (
            "engine/mod.rs",
            "//! Engine layer: x\nmod store;\nmod model;",
        ),
        ("engine/model.rs", "//! Engine layer: x\npub struct Q;"),
        (
            "engine/store.rs",
            "//! Engine layer: x\nuse crate::engine::model::Q;\nuse crate::wire::W;",
        ),
        (
            "wire/mod.rs",
            "//! Wire layer: x\npub struct W(crate::engine::model::Q);",
        ),
        (
            "http/mod.rs",
            "//! HTTP layer: x\nfn f() { crate::tools::go(); }",
        ),
        (
            "tools/mod.rs",
            "//! Tools layer: x\nuse hyper::server::conn::http1;\npub fn go() {}",
        ),
    ]);
    let mut found = layer_violations(&analyse(&bad));
    found.sort();
    assert_eq!(
        found,
        [
            "engine/store.rs (engine) imports wire",
            "engine/store.rs (engine::store) imports engine::model",
            "http/mod.rs (http) imports tools",
            "tools/mod.rs (tools) uses hyper::server::conn::http1",
            "wire/mod.rs (wire) imports engine::model",
        ]
    );
}

#[test]
fn big_folders_and_unlabelled_files_are_caught() {
    let big = "//! Wire layer: x\n".to_owned() + &"// line\n".repeat(FOLDER_LIMIT);
    let t = tree(&[
        ("lib.rs", "//! x\nmod wire;\nmod engine;"),
        ("wire/mod.rs", big.as_str()),
        ("engine/mod.rs", "//! Server layer: wrong word"),
    ]);
    let found = shape_violations(&analyse(&t));
    assert_eq!(found.len(), 2, "{found:?}");
    assert!(found[0].contains("engine/mod.rs"), "{found:?}");
    assert!(found[1].starts_with("src/wire/ holds"), "{found:?}");
}
