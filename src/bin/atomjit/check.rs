//! `atomjit check FILE`: parse and validate, print each kernel's size.

use atomjit::engine::{Config, Engine, ExitStatus, Purpose};

pub fn check(file: &str) -> ExitStatus {
    let loaded = match crate::load(&Engine::new(&Config::default()), file, &Purpose::Inspect) {
        Ok(loaded) => loaded,
        Err(status) => return status,
    };
    for k in &loaded.module.program().kernels {
        outln!(
            "{file}: kernel `{}`: {} instructions, ok",
            k.name,
            k.insts.len()
        );
    }
    ExitStatus::Ok
}
