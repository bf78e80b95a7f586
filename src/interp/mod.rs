//! The reference interpreter: per lane, under the active mask, a plain `match` per instruction.
//! It is the oracle of differential tests, so clarity beats speed. (Being written: issue 2.)

/// Placeholder until the interpreter lands.
#[derive(Debug, Default)]
pub struct Interpreter;

impl Interpreter {
    pub fn new() -> Interpreter {
        Interpreter
    }
}

impl crate::exec::WarpRunner for Interpreter {
    fn run_group(
        &self,
        _warp: &mut crate::exec::WarpState,
        _env: &crate::exec::CtaEnv,
        _pc: u32,
        _mask: u32,
        _stop_pc: Option<u32>,
    ) -> crate::exec::GroupExit {
        crate::exec::GroupExit::Exited
    }
}
