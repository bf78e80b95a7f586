//! `atomjit dump ir|clif|asm FILE`: the IR, the Cranelift IR, or the host machine code.

use atomjit::engine::{Config, Engine, ExitStatus, Module, Purpose};
use clap::Subcommand;

#[derive(Subcommand)]
pub enum DumpWhat {
    /// The IR every dialect lowers to.
    Ir {
        /// The program file.
        file: String,
    },
    /// The Cranelift IR the JIT generates for each kernel.
    Clif {
        /// The program file.
        file: String,
    },
    /// The host machine code of each kernel (Cranelift's disassembly after optimisation and
    /// register allocation).
    Asm {
        /// The program file.
        file: String,
    },
}

type DumpFn =
    fn(&atomjit::ir::Kernel, &atomjit::valid::KernelInfo) -> Result<String, atomjit::jit::JitError>;

pub fn dump(what: DumpWhat) -> ExitStatus {
    let (DumpWhat::Ir { file } | DumpWhat::Clif { file } | DumpWhat::Asm { file }) = &what;
    let loaded = match crate::load(&Engine::new(&Config::default()), file, &Purpose::Inspect) {
        Ok(loaded) => loaded,
        Err(status) => return status,
    };
    match what {
        DumpWhat::Ir { .. } => {
            out!("{}", atomjit::ir::print_program(loaded.module.program()));
            ExitStatus::Ok
        }
        DumpWhat::Clif { .. } => dump_code(&loaded.module, atomjit::jit::dump_clif),
        DumpWhat::Asm { .. } => dump_code(&loaded.module, atomjit::jit::dump_asm),
    }
}

fn dump_code(module: &Module, dump: DumpFn) -> ExitStatus {
    for name in module.kernel_names() {
        let (kernel, info) = module.kernel(name).expect("listed kernel");
        match dump(kernel, info) {
            Ok(text) => outln!("; kernel {name}\n{text}"),
            Err(e) => {
                errln!("error: kernel `{name}`: {e}");
                return ExitStatus::Usage;
            }
        }
    }
    ExitStatus::Ok
}
