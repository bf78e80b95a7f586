//! `atomjit check FILE`: parse and validate, print each kernel's size. A listing's kernel with
//! instructions atomjit cannot lower is reported with every such form and its count; a PTX
//! entry that cannot run with every unsupported construct and its location.

use atomjit::engine::{Config, Engine, Error, ExitStatus, Purpose};

pub fn check(file: &str) -> ExitStatus {
    let loaded = match crate::load(&Engine::new(&Config::default()), file, &Purpose::Inspect) {
        Ok(loaded) => loaded,
        Err(status) => return status,
    };
    let mut status = ExitStatus::Ok;
    for k in &loaded.module.program().kernels {
        if let Ok(Some(broken)) = loaded.module.broken(&k.name) {
            outln!("{file}: {}", broken.to_string().trim_end());
            status = ExitStatus::Usage;
            continue;
        }
        let unsupported = loaded.module.unsupported(&k.name).unwrap_or(&[]);
        if unsupported.is_empty() {
            outln!(
                "{file}: kernel `{}`: {} instructions, ok",
                k.name,
                k.insts.len()
            );
            continue;
        }
        outln!(
            "{file}: kernel `{}`: cannot run: {} unsupported construct{}",
            k.name,
            unsupported.len(),
            if unsupported.len() == 1 { "" } else { "s" }
        );
        for e in unsupported {
            err!("{}", loaded.sources.render(&Error::Parse(e.clone())));
        }
        status = ExitStatus::Usage;
    }
    status
}
