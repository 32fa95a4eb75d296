//! The engine build: a digest of the source the binding is compiled from, so that a result
//! says which engine made it (`_core.engine_build()`). Sweeps and the run store compare it:
//! a run made by another engine build is run again, never mixed in with this one's.
//!
//! The digest covers what can change a result: the sources and manifests of the crates the
//! binding links (base, queue, core and the binding itself) and the workspace's Cargo.lock
//! (the versions of their dependencies). The same source gives the same digest on every
//! machine, whatever the path or the compiler's mood; a changed comment gives another one,
//! which is the cautious side. FNV-1a, 64 bits: an identity, not a defence against forgery.

use std::fs;
use std::path::{Path, PathBuf};

const CRATES: [&str; 4] = ["buflab-base", "buflab-queue", "buflab-core", "buflab-py"];
const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

fn main() {
    let binding = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let crates = binding.parent().expect("crates/ holds the binding");
    let mut files = Vec::new();
    for name in CRATES {
        let root = crates.join(name);
        files.push(root.join("Cargo.toml"));
        collect_sources(&root.join("src"), &mut files);
        println!("cargo:rerun-if-changed={}", root.join("src").display());
        println!("cargo:rerun-if-changed={}", root.join("Cargo.toml").display());
    }
    let lock = crates.parent().expect("the workspace holds crates/").join("Cargo.lock");
    if lock.exists() {
        files.push(lock.clone());
        println!("cargo:rerun-if-changed={}", lock.display());
    }
    // Sorted by path relative to crates/, so the digest does not depend on where the tree is
    // or in which order the file system lists it.
    let mut named: Vec<(String, PathBuf)> =
        files.into_iter().map(|path| (relative(&path, crates), path)).collect();
    named.sort();
    let mut hash = FNV_OFFSET;
    for (name, path) in &named {
        let contents = fs::read(path).expect("a listed source file reads");
        for byte in name.bytes().chain([0]).chain(contents).chain([0]) {
            hash = (hash ^ u64::from(byte)).wrapping_mul(FNV_PRIME);
        }
    }
    println!("cargo:rustc-env=BUFLAB_ENGINE_SOURCE={hash:016x}");
}

fn collect_sources(dir: &Path, files: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect_sources(&path, files);
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            files.push(path);
        }
    }
}

fn relative(path: &Path, crates: &Path) -> String {
    let inside = path.strip_prefix(crates).unwrap_or(path);
    // Cargo.lock sits one level up: named as such rather than by an absolute path.
    let text = if inside == path { "Cargo.lock".into() } else { inside.to_string_lossy() };
    text.replace('\\', "/")
}
