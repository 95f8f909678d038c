//! Compiles code mode's stdlib (the prelude, the globals and the `safesh:*`
//! modules in `src/js/`) to QuickJS bytecode with the same engine crate the
//! library runs, so a run loads bytecode instead of parsing ~600 lines of
//! JavaScript every time (most of `safesh code -e 1`'s startup).
//!
//! The bytecode goes to `$OUT_DIR/stdlib/` and is included by `engine.rs`.
//! It is written in the target's byte order; the engine crate is the one
//! `Cargo.lock` pins for both, so the bytecode version always matches.

use rquickjs::loader::{ImportAttributes, Loader, Resolver};
use rquickjs::{Context, Ctx, Module, Runtime, WriteOptions, WriteOptionsEndianness};
use std::path::{Path, PathBuf};

/// Every module the engine loads from the binary: its name and source file.
/// Keep in step with `engine::STDLIB` (a test checks they agree).
const STDLIB: &[(&str, &str)] = &[
    ("safesh:prelude", "prelude.js"),
    ("safesh:globals", "globals.js"),
    ("safesh:fs", "fs.js"),
    ("safesh:text", "text.js"),
    ("safesh:shell", "shell.js"),
    ("safesh:stdlib", "stdlib.js"),
    ("safesh/streams", "streams.js"),
    ("safesh:streams", "streams.js"),
];

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let src_dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR")?).join("src/js");
    let out_dir = PathBuf::from(std::env::var("OUT_DIR")?).join("stdlib");
    std::fs::create_dir_all(&out_dir)?;
    let big_endian = std::env::var("CARGO_CFG_TARGET_ENDIAN").as_deref() == Ok("big");
    for (name, file) in STDLIB {
        let path = src_dir.join(file);
        println!("cargo:rerun-if-changed={}", path.display());
        let source = std::fs::read_to_string(&path)?;
        // A fresh engine per module: QuickJS resolves a module's imports when
        // it compiles it, so the stdlib's imports are loaded (from source)
        // into this engine; only `name`'s own bytecode is written.
        let rt = Runtime::new()?;
        rt.set_loader(StdlibByName, StdlibSource(src_dir.clone()));
        // Compiling needs the Eval intrinsic; `full` is what the library runs with.
        let ctx = Context::full(&rt)?;
        let bytes = ctx.with(|ctx| -> Result<Vec<u8>, String> {
            let module =
                Module::declare(ctx.clone(), *name, source).map_err(|e| describe(&ctx, e))?;
            module
                .write(WriteOptions {
                    endianness: if big_endian {
                        WriteOptionsEndianness::Big
                    } else {
                        WriteOptionsEndianness::Little
                    },
                    ..Default::default()
                })
                .map_err(|e| describe(&ctx, e))
        });
        let bytes = bytes.map_err(|e| format!("compiling {file} ({name}): {e}"))?;
        std::fs::write(out_dir.join(bytecode_file(name)), bytes)?;
    }
    Ok(())
}

/// Resolves the stdlib's names (the only imports the stdlib has).
struct StdlibByName;

impl Resolver for StdlibByName {
    fn resolve<'js>(
        &mut self,
        ctx: &Ctx<'js>,
        _base: &str,
        name: &str,
        _attributes: Option<ImportAttributes<'js>>,
    ) -> rquickjs::Result<String> {
        match STDLIB.iter().find(|(n, _)| *n == name) {
            Some(_) => Ok(name.to_string()),
            None => Err(rquickjs::Exception::throw_message(
                ctx,
                &format!("the stdlib imports {name:?}, which is not a stdlib module"),
            )),
        }
    }
}

/// Loads a stdlib module from its source file (in `src/js/`).
struct StdlibSource(PathBuf);

impl Loader for StdlibSource {
    fn load<'js>(
        &mut self,
        ctx: &Ctx<'js>,
        name: &str,
        _attributes: Option<ImportAttributes<'js>>,
    ) -> rquickjs::Result<Module<'js>> {
        let file = STDLIB
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, f)| Path::new(&self.0).join(f));
        let source = file.and_then(|f| std::fs::read_to_string(f).ok());
        match source {
            Some(source) => Module::declare(ctx.clone(), name, source),
            None => Err(rquickjs::Exception::throw_message(
                ctx,
                &format!("cannot read the stdlib module {name:?}"),
            )),
        }
    }
}

/// The error, with the exception's message when there is one.
fn describe(ctx: &rquickjs::Ctx<'_>, e: rquickjs::Error) -> String {
    match e {
        rquickjs::Error::Exception => format!("{:?}", ctx.catch()),
        e => e.to_string(),
    }
}

/// `safesh:fs` → `safesh_fs.qjsbc`, `safesh/streams` →
/// `safesh__streams.qjsbc` (the names `engine.rs` includes; one file per
/// module name, as the name is part of the bytecode).
fn bytecode_file(name: &str) -> String {
    format!("{}.qjsbc", name.replace(':', "_").replace('/', "__"))
}
