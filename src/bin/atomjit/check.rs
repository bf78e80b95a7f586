//! `atomjit check FILE`: parse and validate, print each kernel's size. A listing's kernel with
//! instructions atomjit cannot lower is reported with every such form and its count.

use atomjit::engine::{Config, Engine, ExitStatus, Purpose};

pub fn check(file: &str) -> ExitStatus {
    let loaded = match crate::load(&Engine::new(&Config::default()), file, &Purpose::Inspect) {
        Ok(loaded) => loaded,
        Err(status) => return status,
    };
    let mut status = ExitStatus::Ok;
    for k in &loaded.module.program().kernels {
        match loaded.module.broken(&k.name) {
            Ok(Some(broken)) => {
                outln!("{file}: {}", broken.to_string().trim_end());
                status = ExitStatus::Usage;
            }
            Ok(None) | Err(_) => outln!(
                "{file}: kernel `{}`: {} instructions, ok",
                k.name,
                k.insts.len()
            ),
        }
    }
    status
}
