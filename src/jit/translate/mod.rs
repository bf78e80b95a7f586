//! Translation of one kernel, or one chunk of a long kernel ([`Plan`]), into one Cranelift
//! function.
//!
//! # Shape of the generated function
//!
//! * The entry block checks `pc == stop_pc` (the group may start at its own reconvergence
//!   point) and dispatches on `pc` with a `br_table` to the block of the resume instruction.
//!   Only resume points ([`resume_points`]: pc 0, branch targets, the instruction after a
//!   branch, barrier or exit, reconvergence points and basic-block starts) are entries; other
//!   instructions are reached by falling through, so one instruction's values dominate the
//!   next. `JitKernel::run_group` sends a group at any other pc (which the scheduler never
//!   produces) to the reference interpreter.
//! * Base pointers (register file, predicates, counters) are movable loads from the context,
//!   reloaded per instruction: values kept live from the entry across hundreds of blocks made
//!   register allocation dominate compile time.
//! * Every resume point `pc` has a block `inst[pc](mask: i32, insts: i64)`: `mask` is the
//!   group's active mask, `insts` counts the warp-instructions executed by this call (flushed
//!   into `Stats::warp_insts` on every return). Any other instruction continues the block the
//!   instruction before it left open, with both values as SSA values (fewer blocks and jumps
//!   for Cranelift to compile). Block `inst[n]` (one past the last instruction) is an implicit
//!   `EXIT`: validation rejects kernels that can run past their end, so it is only reachable
//!   from a resume pc the scheduler should never pass.
//! * At an instruction that is a reconvergence point (`KernelInfo::is_join`) the block first
//!   compares `stop_pc` with its pc and returns `Reconverge` when they match.
//! * The instruction body computes `exec = mask & guard` and, for per-lane work, runs a lane
//!   loop over the set bits of `exec` (`ctz`, then clear the lowest bit), in increasing lane
//!   order as the IR requires. Per-lane predicate results are accumulated as lane masks in loop
//!   parameters and written to the predicate register once, after the loop.
//! * **Fused regions** ([`fusion_regions`]): a run of per-lane instructions inside a basic
//!   block with at most one memory access (or, as vector code, two loads of which one is
//!   loaded once for the warp; or, as scalar code, accesses whose lanes come one access after
//!   the other, [`lanes_after`]) runs *lane-major*: one loop over the group's lanes
//!   runs the whole run for a lane, then the next lane. It is indistinguishable from
//!   instruction-major order (the argument is on [`fusion_regions`]) and removes a loop, a
//!   reload of every register read and the loop bookkeeping per instruction: values written or
//!   read earlier in the lane's pass are reused from a register cache, predicates ride the
//!   region loop as masks (a lane updates its own bit) and are stored once after it, and each
//!   atomic's counter is one `popcnt` after the loop. An instruction's guard becomes a per-lane
//!   branch around its body. Only the first instruction of a region has an entry block.
//!   A loop head reached by falling through is *peeled*: its region also runs, merged, in the
//!   region before it, and the end of the merged region gets a block of its own where both
//!   copies continue.
//! * **Back to the interpreter** (`Event::Interpret`): where only instruction order can say
//!   which of two faults comes first (a load hoisted before a region's loop faulted), the
//!   code returns the region's first pc and mask, and the reference interpreter runs the group
//!   from there.
//! * **SIMD lanes** (`simd/`): a fused region of nothing but 32-bit integer register work and
//!   its plain loads or store runs chunk-major instead, four lanes at a time in `i32x4`
//!   code, over the warp's eight chunks of four lanes.
//! * **Dead register stores are skipped** ([`KernelInfo::live_out`]): a register value no
//!   instruction after the region can read, and that the rest of the lane's pass reads from the
//!   register cache, never reaches the register file (in `counter`, the address and the
//!   addend live only in host registers).
//! * **Warp-collective ops and uniform registers** (`warp.rs`): `SHFL`, `REDUX` and `MATCH`
//!   read every source they need before writing any destination, and an instruction that
//!   writes a uniform register or predicate is followed by its broadcast from the lowest
//!   executing lane to all 32 slots. Neither is fused, and the stores of registers other lanes
//!   read (uniform ones, `SHFL` sources) are never skipped as dead: the liveness
//!   ([`KernelInfo::live_out`]) follows one lane's paths, and another lane may read the value
//!   where no path of the writing lane does.
//! * **Warp-invariant registers** (`invariant.rs`, [`KernelInfo::invariant`]): an instruction
//!   that writes only such registers runs once for the warp (before a fused region's loop) and
//!   stores its value into every lane's slot; an atomic on an invariant address is one host
//!   atomic for the warp (`memory.rs`, "Warp aggregation").
//! * Exits from the function go through `ret(code, insts)`. A faulting lane's cold block
//!   writes the trap payload (trap site, lane, address, and at an atomic the executing lanes)
//!   and its instruction count into the context and jumps to the shared `trap` block.
//!
//! # Memory, alias regions and ordering
//!
//! Register-file accesses are tagged with their own alias region (`regs`), the context,
//! predicates and counters with another (`state`), device memory (global, shared, constant bank)
//! with a third (`device`): the three never overlap, so Cranelift may forward register values
//! across device accesses, which is the common case. Device loads and stores carry no `notrap`,
//! `readonly` or `can_move` flag (only constant-bank reads, which nothing writes during a
//! launch, are marked movable), so they stay in program order relative to every other side
//! effect, and Cranelift's alias analysis treats every `atomic_rmw`, `atomic_cas`, `fence` and
//! `sequence_point` as a barrier that no load may be forwarded across and no store eliminated
//! across (`has_memory_fence_semantics` in `cranelift_codegen::alias_analysis`). The generated
//! code never loops over a memory read except inside a lane loop (different lane, different
//! address value) or a CAS retry loop (which re-reads through `atomic_cas`): a program's spin
//! loop is a backward branch, which returns to the scheduler (`Yield`), so no load can be
//! hoisted out of it.
//!
//! See `memory.rs` for the order-by-order lowering.

mod alu;
mod invariant;
mod memory;
#[cfg(test)]
pub(super) use memory::chained;
mod simd;
mod surface;
mod warp;

use super::slow::SideTables;
use super::warp_ctx::{self, off, Event};
use super::JitError;
use crate::exec::{GLOBAL_BASE, WARP_STRIDE};
use crate::ir::{
    Control, Guard, Inst, Kernel, MemOrder, Op, Operand, Pred, PredSrc, Reg, Space, Src, SrcMod, Ty,
};
use crate::valid::KernelInfo;
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::types::{I32, I64};
use cranelift_codegen::ir::{
    AliasRegion, AliasRegionData, BlockArg, InstBuilder, JumpTableData, MemFlagsData, SigRef, Value,
};
use cranelift_codegen::ir::{Block, Type};
use cranelift_frontend::FunctionBuilder;
use std::collections::HashMap;

/// Bytes between two registers of one lane in the register file.
const REG_ROW_BYTES: i32 = (WARP_STRIDE * 4) as i32;

/// What an instruction's translation leaves behind.
pub(super) enum Flow {
    /// Control continues at the next instruction with this mask.
    Next(Value),
    /// The instruction ended the block (branch, return); nothing falls through.
    Done,
}

/// One lane inside a lane loop.
#[derive(Clone, Copy)]
pub(super) struct Lane {
    /// Lane index (i32).
    pub index: Value,
    /// Address of this lane's register 0: `regs + lane * 4` (register `r` is at `r * 128`).
    pub row: Value,
}

/// Memory flags for the three disjoint alias regions (see the module docs).
struct Flags {
    regs: MemFlagsData,
    state: MemFlagsData,
    /// Fields of the context that never change during a call (pointers, limits, geometry):
    /// safe to load once and to move.
    state_const: MemFlagsData,
    /// The same fields read on a rarely taken path: not movable, so Cranelift's loop-invariant
    /// code motion cannot hoist them out of a lane loop and keep them live (and spilled)
    /// across every iteration of its fast path.
    state_cold: MemFlagsData,
    device: MemFlagsData,
    /// Constant-bank reads: nothing writes the bank during a launch.
    cbank: MemFlagsData,
}

pub(super) struct Translator<'a, 'f> {
    b: FunctionBuilder<'f>,
    kernel: &'a Kernel,
    info: &'a KernelInfo,
    tables: &'a mut SideTables,
    flags: Flags,
    ctx: Value,
    regs: Value,
    preds: Value,
    stats: Value,
    stop: Value,
    /// The block of each resume point (`resume_points`), entered with `(mask, insts)`. Other
    /// instructions are reached only by falling through and continue the block before them.
    inst_blocks: Vec<Option<Block>>,
    /// Whether the current block is still open for the next instruction to fall into.
    open: bool,
    /// The instructions of this function's chunk (`Plan`): control that leaves it returns
    /// `Continue` and `JitKernel::run_group` calls the chunk of the new pc.
    range: std::ops::Range<usize>,
    ret_block: Block,
    trap_block: Block,
    reconverge_block: Block,
    /// The current instruction's pc, active mask and instruction count.
    pc: u32,
    mask: Value,
    insts: Value,
    convert_sig: Option<SigRef>,
    /// The signature of `WarpCtx::rmw_value`, imported on first use.
    rmw_sig: Option<SigRef>,
    /// The signature of `WarpCtx::surface_lane`, imported on first use.
    surface_sig: Option<SigRef>,
    /// While a surface access's resolver fault is translated: the trap site it registers
    /// takes its report from `WarpCtx::surface_fault`.
    surface_trap: bool,
    /// While the instructions of a fused region are translated: the region loop's lane (see
    /// [`fusion_regions`]). `lane_loop` then emits its body for this lane instead of a loop.
    fused: Option<Lane>,
    /// In a fused region: the current lane's value of each register known on the current path
    /// (written or read earlier in the lane's pass), so later instructions use the value instead
    /// of reloading it (Cranelift forwards only the last store of an alias region).
    reg_cache: Vec<(u16, Value)>,
    /// The i64 each 64-bit register write split into its two words, keyed by those words'
    /// values: a pair read whose two words are still exactly those values (from the register
    /// cache) is that i64, without the shifts and `or` that join the words again (an
    /// `IMAD.WIDE` result used as an address). Keyed by SSA value, so no write or cache flush
    /// can make an entry wrong: a word rewritten or reloaded is another value, and an i64
    /// dominates the words made from it, which dominate the read.
    pairs: HashMap<(Value, Value), Value>,
    /// How many more chunk loops with a load or store this function may build (see
    /// [`VECTOR_MEMORY_LOOPS`]).
    vector_memory_left: u32,
    /// In a fused region: the current mask of every predicate the region uses. The region loop
    /// carries them; a predicate write updates only the current lane's bit; they are stored
    /// back after the loop.
    pred_cache: Vec<(u16, Value)>,
    /// While an atomic's lanes are translated: its op and executing lanes. Its counter is added
    /// once after the lane loop; a faulting lane's trap path adds the lanes before it.
    atomic_exec: Option<(crate::ir::AtomicOp, Value, u32)>,
    /// In a fused region with accesses in lane order ([`RegionRules::lanes_after`]): the
    /// atomics before the instruction being translated (op, guard, elements). When a lane of a
    /// later access faults, every lane of these has performed them (their lanes all come
    /// before it), so its trap path counts them.
    earlier_atomics: Vec<(crate::ir::AtomicOp, Guard, u16)>,
    /// The last instruction of the region being translated (the current instruction when it
    /// is not fused): register writes no instruction after it can read skip their store.
    region_last: usize,
    /// The registers live after each instruction of `range` (bit sets), from the validator's
    /// liveness, computed once for the chunk.
    live_after: Vec<Vec<u64>>,
    /// While a pure per-lane instruction whose every destination is uniform is translated:
    /// only its lowest executing lane runs (the broadcast keeps that lane's results alone).
    lowest_lane_only: bool,
    /// Registers that `SHFL` reads from other lanes ([`warp::cross_lane_reads`]): their
    /// stores are never skipped as dead.
    cross_lane: Vec<Reg>,
    /// `Plan::warp_aggregation`.
    aggregate: crate::jit::Aggregation,
    /// While an invariant writer runs once for the warp (`invariant.rs`): register writes go
    /// to the register cache only; the caller stores them into every lane's slot.
    splatting: bool,
    /// `Plan::simd`: vectorised fused regions (`simd/`).
    simd: bool,
    /// In a vectorised region (`simd/`): the chunk's value of each register known in its pass
    /// (`i32x4`), or a hoisted invariant (i32) to splat.
    vcache: Vec<(u16, Value)>,
    /// In a vectorised region: the registers whose `vcache` vector is loose (exact in the
    /// chunk's lanes of the region's mask only; `simd/mod.rs`, `vwrite`).
    vloose: Vec<u16>,
    /// In a vectorised region: the chunk's value of each predicate its pass has read or
    /// written (`i32x4` lane masks), and whether it wrote it (`simd/mod.rs`, `vpred`).
    vpreds: Vec<(u16, Value, bool)>,
    /// In a vectorised region: the scalar values of the warp-invariant writers hoisted before
    /// its loop (the scalar code of its memory access reads them).
    vhoisted: Vec<(u16, Value)>,
    /// In a whole-warp chunk (`simd/affine.rs`): the registers whose chunk vector is
    /// `v + j * c` in lane `j` (mod 2^32), as `(register, v, c)`, `v` an i32.
    vaffine: Vec<(u16, Value, u32)>,
    /// In a whole-warp chunk: the register pairs (by low register) whose 64-bit value in lane
    /// `j` is `a + j * c` exactly when `valid` (an i8) is set, as `(register, a, c, valid)`.
    vaffine64: Vec<(u16, Value, u32, Value)>,
    /// In a vectorised region: the words of its load through a warp-invariant address when it
    /// ran once before the chunk loop (`simd/memory.rs`, `preload`), splatted, and the load's
    /// pc.
    vpreload: Option<(u32, Vec<Value>)>,
    /// In a vectorised region whose access may run contiguously: the run it is in
    /// (`simd/memory.rs`, [`simd::Run`]).
    vrun: Option<simd::Run>,
    /// While a load of a region with another access runs before the region's loop
    /// (`simd/memory.rs`, `preload`): where its fault goes instead of the trap, the region's
    /// first pc with its mask and instruction count (`Event::Interpret`).
    deopt: Option<(u32, Value, Value)>,
}

/// How many vector chunk loops with a memory access (a load or store, `simd/memory.rs`, or an
/// atomic, `simd/atomic.rs`) one compiled function builds; regions with one beyond them run
/// lane by lane. A vector region builds two loops, one for whole warps and one for other masks
/// (`simd::vector_loop`), while two are left, else the general one alone (always alone in
/// kernels whose warps are narrower than 32 lanes). A vector memory loop is several times the
/// code of the scalar loop (a contiguous path and four unrolled scalar lanes per chunk), which
/// made kernels with hundreds of stores compile three times as slowly (`atomics_edges.s` 27 →
/// 86 ms) for no gain: such straight-line code runs once per warp. Kernels whose speed matters
/// have a handful of memory regions, in their loops or straight line.
pub(super) const VECTOR_MEMORY_LOOPS: u32 = 8;

fn arg(v: Value) -> BlockArg {
    BlockArg::Value(v)
}

impl<'a, 'f> Translator<'a, 'f> {
    /// Builds the whole function body. The builder's function already has the signature
    /// `(ctx: i64, pc: i32, mask: i32, stop: i32) -> i32`.
    pub fn build(
        mut b: FunctionBuilder<'f>,
        kernel: &'a Kernel,
        info: &'a KernelInfo,
        tables: &'a mut SideTables,
        frontend: cranelift_codegen::isa::TargetFrontendConfig,
        plan: &Plan,
        chunk: usize,
    ) -> Result<(), JitError> {
        let region = |b: &mut FunctionBuilder, id: u32, name: &'static str| -> AliasRegion {
            b.func.dfg.alias_regions.insert(AliasRegionData {
                user_id: id,
                description: name.into(),
            })
        };
        let regs_region = region(&mut b, 1, "regs");
        let state_region = region(&mut b, 2, "state");
        let device_region = region(&mut b, 3, "device");
        let flags = Flags {
            regs: MemFlagsData::trusted().with_alias_region(Some(regs_region)),
            state: MemFlagsData::trusted().with_alias_region(Some(state_region)),
            state_const: MemFlagsData::trusted()
                .with_readonly()
                .with_can_move()
                .with_alias_region(Some(state_region)),
            state_cold: MemFlagsData::trusted()
                .with_readonly()
                .with_alias_region(Some(state_region)),
            device: MemFlagsData::new().with_alias_region(Some(device_region)),
            cbank: MemFlagsData::trusted()
                .with_readonly()
                .with_can_move()
                .with_alias_region(Some(device_region)),
        };

        let n = kernel.insts.len();
        let entry = b.create_block();
        b.append_block_params_for_function_params(entry);
        let range = plan.range(chunk, n);
        let resume = &plan.resume;
        let inst_blocks: Vec<Option<Block>> = resume
            .iter()
            .enumerate()
            .map(|(pc, &r)| {
                (r && Plan::owns(&range, pc, n)).then(|| {
                    let blk = b.create_block();
                    b.append_block_param(blk, I32);
                    b.append_block_param(blk, I64);
                    blk
                })
            })
            .collect();
        let ret_block = b.create_block();
        b.append_block_param(ret_block, I32);
        b.append_block_param(ret_block, I64);
        let trap_block = b.create_block();
        b.set_cold_block(trap_block);
        let reconverge_block = b.create_block();
        b.append_block_param(reconverge_block, I32);
        b.append_block_param(reconverge_block, I64);

        b.switch_to_block(entry);
        let params = b.block_params(entry).to_vec();
        let (ctx, pc, mask, stop) = (params[0], params[1], params[2], params[3]);
        let regs = b.ins().load(I64, flags.state_const, ctx, off::REGS);
        let preds = b.ins().load(I64, flags.state_const, ctx, off::PREDS);
        let stats = b.ins().load(I64, flags.state_const, ctx, off::STATS);
        let zero64 = b.ins().iconst(I64, 0);

        let mut t = Translator {
            b,
            kernel,
            info,
            tables,
            flags,
            ctx,
            regs,
            preds,
            stats,
            stop,
            inst_blocks,
            open: false,
            range: range.clone(),
            ret_block,
            trap_block,
            reconverge_block,
            pc: 0,
            mask,
            insts: zero64,
            convert_sig: None,
            rmw_sig: None,
            surface_sig: None,
            surface_trap: false,
            fused: None,
            reg_cache: Vec::new(),
            pairs: HashMap::new(),
            vector_memory_left: VECTOR_MEMORY_LOOPS,
            pred_cache: Vec::new(),
            atomic_exec: None,
            earlier_atomics: Vec::new(),
            region_last: 0,
            live_after: info.live_after_range(kernel, range.clone()),
            lowest_lane_only: false,
            cross_lane: warp::cross_lane_reads(kernel),
            aggregate: plan.warp_aggregation,
            splatting: false,
            simd: plan.simd,
            vcache: Vec::new(),
            vloose: Vec::new(),
            vpreds: Vec::new(),
            vhoisted: Vec::new(),
            vaffine: Vec::new(),
            vaffine64: Vec::new(),
            vpreload: None,
            vrun: None,
            deopt: None,
        };
        t.build_entry(pc, mask, zero64)?;
        t.build_exits();
        for region in &plan.regions {
            if range.contains(&region.start) {
                t.build_range(region.clone())?;
            }
        }
        if range.end == n {
            t.build_implicit_end(n)?;
        }
        t.b.seal_all_blocks();
        t.b.finalize(frontend);
        Ok(())
    }

    fn build_entry(&mut self, pc: Value, mask: Value, zero64: Value) -> Result<(), JitError> {
        let dispatch = self.b.create_block();
        let at_stop = self.b.ins().icmp(IntCC::Equal, pc, self.stop);
        self.b.ins().brif(
            at_stop,
            self.reconverge_block,
            &[arg(mask), arg(zero64)],
            dispatch,
            &[],
        );
        self.b.switch_to_block(dispatch);
        let args = [arg(mask), arg(zero64)];
        let n = self.kernel.insts.len();
        // Only resume points are entries: the other instructions of a basic block are reached
        // by falling through, so values and checks of one instruction dominate the next.
        let not_resumable = self.b.create_block();
        let table: Vec<_> = (0..=n)
            .map(|pc| match self.inst_blocks[pc] {
                Some(blk) => self.b.func.dfg.block_call(blk, &args),
                None => self.b.func.dfg.block_call(not_resumable, &[]),
            })
            .collect();
        let default = self.b.func.dfg.block_call(not_resumable, &[]);
        let jt = self
            .b
            .create_jump_table(JumpTableData::new(default, &table));
        self.b.ins().br_table(pc, jt);
        // `run_group` never passes a pc that is not a resume point (it runs such a group on
        // the interpreter); this exit only keeps the function total.
        self.b.switch_to_block(not_resumable);
        let code = self.b.ins().iconst(I32, Event::NotResumable as i64);
        self.b.ins().jump(self.ret_block, &[arg(code), arg(zero64)]);
        Ok(())
    }

    /// The shared return, trap and reconverge blocks.
    fn build_exits(&mut self) {
        // ret(code, insts): flush the instruction count and return the event code.
        self.b.switch_to_block(self.ret_block);
        self.load_bases();
        let p = self.b.block_params(self.ret_block).to_vec();
        let old = self
            .b
            .ins()
            .load(I64, self.flags.state, self.stats, off::STAT_WARP_INSTS);
        let new = self.b.ins().iadd(old, p[1]);
        self.b
            .ins()
            .store(self.flags.state, new, self.stats, off::STAT_WARP_INSTS);
        self.b.ins().return_(&[p[0]]);

        // trap: the payload and the instruction count are already in the context.
        self.b.switch_to_block(self.trap_block);
        let insts = self
            .b
            .ins()
            .load(I64, self.flags.state, self.ctx, off::OUT_INSTS);
        let code = self.b.ins().iconst(I32, Event::Trap as i64);
        self.b.ins().jump(self.ret_block, &[arg(code), arg(insts)]);

        // reconverge(mask, insts).
        self.b.switch_to_block(self.reconverge_block);
        let p = self.b.block_params(self.reconverge_block).to_vec();
        self.b
            .ins()
            .store(self.flags.state, p[0], self.ctx, off::OUT_B);
        let code = self.b.ins().iconst(I32, Event::Reconverge as i64);
        self.b.ins().jump(self.ret_block, &[arg(code), arg(p[1])]);
    }

    /// Block `inst[n]`: the remaining lanes exit.
    fn build_implicit_end(&mut self, n: usize) -> Result<(), JitError> {
        let blk = self.resume_block(n as u32)?;
        self.b.switch_to_block(blk);
        let p = self.b.block_params(blk).to_vec();
        self.mask = p[0];
        self.insts = p[1];
        self.load_bases();
        self.exit_lanes(p[0]);
        self.ret_event(Event::Exited);
        Ok(())
    }

    /// The block of resume point `pc`.
    fn resume_block(&self, pc: u32) -> Result<Block, JitError> {
        self.inst_blocks
            .get(pc as usize)
            .copied()
            .flatten()
            .ok_or_else(|| {
                self.internal(format!(
                    "instruction {pc} is entered but is not a resume point"
                ))
            })
    }

    /// Control continues at `next` with `mask`: a jump to its block if it is a resume point,
    /// a `Continue` return if it starts another chunk, otherwise the next instruction's code
    /// follows in the current block.
    fn fall_through(&mut self, next: usize, mask: Value) {
        match self.inst_blocks.get(next).copied().flatten() {
            Some(blk) => {
                self.b.ins().jump(blk, &[arg(mask), arg(self.insts)]);
                self.open = false;
            }
            None if next >= self.range.end => {
                self.continue_in_other_chunk(next as u32, mask);
                self.open = false;
            }
            None => {
                self.mask = mask;
                self.open = true;
            }
        }
    }

    /// Whether `pc` is compiled in this function: an instruction of its chunk, or the implicit
    /// end `n` in the last chunk.
    fn in_chunk(&self, pc: u32) -> bool {
        Plan::owns(&self.range, pc as usize, self.kernel.insts.len())
    }

    /// Returns `Continue` at `pc` (the first instruction of another chunk) with `mask`.
    fn continue_in_other_chunk(&mut self, pc: u32, mask: Value) {
        self.store_out_const(off::OUT_A, pc);
        self.store_out(off::OUT_B, mask);
        self.ret_event(Event::Continue);
    }

    /// Loads the register-file, predicate and counter base pointers for the current
    /// instruction. They are movable loads: unused ones disappear, lane loops hoist them, and
    /// within a basic block Cranelift merges them; they are not kept live from the entry block
    /// because long-lived values across hundreds of blocks make register allocation slow.
    fn load_bases(&mut self) {
        let cst = self.flags.state_const;
        self.regs = self.b.ins().load(I64, cst, self.ctx, off::REGS);
        self.preds = self.b.ins().load(I64, cst, self.ctx, off::PREDS);
        self.stats = self.b.ins().load(I64, cst, self.ctx, off::STATS);
    }

    /// Switches to block `inst[pc]` if `pc` is a resume point (else the code continues the
    /// block the instruction before left open), emits its reconvergence check if it is a join,
    /// and sets the current pc, mask and instruction count (`insts` not yet incremented).
    fn enter_instruction(&mut self, pc: u32) {
        self.pc = pc;
        let Some(blk) = self.inst_blocks[pc as usize] else {
            if !self.open {
                // Unreachable code (after an unconditional exit or branch): a block of its own
                // that nothing jumps to, which Cranelift removes.
                let blk = self.b.create_block();
                self.b.switch_to_block(blk);
                self.mask = self.b.ins().iconst(I32, 0);
                self.insts = self.b.ins().iconst(I64, 0);
            }
            self.open = false;
            return;
        };
        self.open = false;
        self.b.switch_to_block(blk);
        let p = self.b.block_params(blk).to_vec();
        self.mask = p[0];
        self.insts = p[1];
        if self.info.is_join()[pc as usize] {
            let cont = self.b.create_block();
            let pc_v = self.b.ins().iconst(I32, pc as i64);
            let at_stop = self.b.ins().icmp(IntCC::Equal, pc_v, self.stop);
            self.b.ins().brif(
                at_stop,
                self.reconverge_block,
                &[arg(self.mask), arg(self.insts)],
                cont,
                &[],
            );
            self.b.switch_to_block(cont);
        }
    }

    fn build_instruction(&mut self, pc: u32) -> Result<(), JitError> {
        self.enter_instruction(pc);
        self.region_last = pc as usize;
        self.insts = self.b.ins().iadd_imm_s(self.insts, 1);
        self.load_bases();
        let inst = &self.kernel.insts[pc as usize];
        if self.is_invariant_writer(inst) {
            // Once for the warp (`invariant.rs`), when any lane runs.
            let once = self.b.create_block();
            let cont = self.b.create_block();
            self.b.ins().brif(self.mask, once, &[], cont, &[]);
            self.b.switch_to_block(once);
            self.reg_cache.clear();
            let done = self.emit_invariant(pc as usize);
            self.reg_cache.clear();
            done?;
            self.b.ins().jump(cont, &[]);
            self.b.switch_to_block(cont);
            self.fall_through(pc as usize + 1, self.mask);
            return Ok(());
        }
        // Uniform destinations are broadcast after the instruction, from the lowest lane of
        // the mask it executed with (its guard is read before it runs: it may rewrite it).
        let uniform = warp::UniformWrites::of(self.kernel, inst);
        let broadcast_exec = if uniform.is_empty() || inst.guard.is_never() {
            None
        } else {
            Some(self.exec_mask(inst.guard)?)
        };
        self.lowest_lane_only =
            broadcast_exec.is_some() && uniform.only_uniform && inst.op.is_pure_per_lane();
        let flow = self.translate_inst(inst);
        self.lowest_lane_only = false;
        match flow? {
            Flow::Next(mask) => {
                if let Some(exec) = broadcast_exec {
                    self.broadcast_uniform(&uniform, exec);
                }
                self.fall_through(pc as usize + 1, mask)
            }
            Flow::Done if broadcast_exec.is_some() => {
                return Err(self.internal("an instruction that ends a block wrote a uniform slot"))
            }
            Flow::Done => {}
        }
        Ok(())
    }

    /// Whether a region of the single instruction `pc` goes through [`Self::build_region`]
    /// for its vector translation (`simd/`).
    fn vector_alone(&self, pc: usize) -> bool {
        let inst = &self.kernel.insts[pc];
        self.simd
            && !matches!(inst.op, Op::Nop)
            && matches!(
                fusion_of(self.kernel, self.info, inst, self.aggregate),
                Fusion::Alu | Fusion::Memory
            )
            && simd::vectorisable(self.kernel, inst)
            && !self.is_invariant_writer(inst)
            && simd::adjacent_atomics(&self.kernel.insts, self.info, &(pc..pc + 1))
            && self.vector_memory_allowed(&(pc..pc + 1))
    }

    /// The instructions of `region` that its loop runs: all but the hoisted invariant writers
    /// and the `NOP`s (a region of nothing else needs no loop).
    fn unhoisted(&self, region: &std::ops::Range<usize>) -> Vec<usize> {
        region
            .clone()
            .filter(|&pc| {
                let inst = &self.kernel.insts[pc];
                !matches!(inst.op, Op::Nop)
                    && !self.is_invariant_writer(inst)
                    && self.lane_constant_write(inst).is_none()
            })
            .collect()
    }

    /// When `inst` is the one writer of a lane-constant predicate (`KernelInfo::pred_lanes`):
    /// the predicate and the value it writes in every lane. A fused region writes it once,
    /// for all its lanes, before its loop: every read of the predicate comes after its writer,
    /// so no instruction of the region reads it before, and what each lane would write is
    /// its bit of the lane set.
    fn lane_constant_write(&self, inst: &Inst) -> Option<(Pred, u32)> {
        let Op::SetP { dst, dst2, .. } = inst.op else {
            return None;
        };
        if !inst.guard.is_always() || !dst2.is_pt() {
            return None;
        }
        Some((dst, self.info.pred_lanes(dst)?))
    }

    /// Whether `region`'s loop runs four lanes at a time: it is [`vector_code`], and the vector
    /// memory budget allows it.
    fn runs_as_vector(&self, region: &std::ops::Range<usize>) -> bool {
        vector_code(self.kernel, self.info, self.aggregate, self.simd, region)
            && self.vector_memory_allowed(region)
    }

    /// Translates the region `region`: a single instruction by itself unless it is vector code,
    /// anything else as a fused region.
    fn build_range(&mut self, region: std::ops::Range<usize>) -> Result<(), JitError> {
        if region.len() == 1 && !self.vector_alone(region.start) {
            self.build_instruction(region.start as u32)
        } else {
            self.build_region(region)
        }
    }

    /// Whether the instructions `region` access memory (a vector region's load or store, or
    /// its atomic).
    fn has_memory_access(&self, region: &std::ops::Range<usize>) -> bool {
        region
            .clone()
            .any(|pc| memory_access(&self.kernel.insts[pc].op))
    }

    /// Whether [`VECTOR_MEMORY_LOOPS`] leaves room for `region` as vector code: it has no
    /// memory access, or the function has vector memory loops left.
    fn vector_memory_allowed(&self, region: &std::ops::Range<usize>) -> bool {
        self.vector_memory_left > 0 || !self.has_memory_access(region)
    }

    /// A fused region (see [`fusion_regions`]): one lane loop runs every instruction of the
    /// region for one lane before the next lane, or, when every instruction has a vector
    /// translation, one loop runs them for four lanes at a time (`simd/`). Atomic counters
    /// are added once, after the loop, from each atomic's executing-lane count.
    fn build_region(&mut self, region: std::ops::Range<usize>) -> Result<(), JitError> {
        // The rest runs four lanes at a time when all of it has a vector translation
        // (`simd/`), else lane by lane.
        let vector = self.runs_as_vector(&region);
        // Two loads run together only as vector code, the early one before the loop; else
        // the region is the two regions it would have been without that rule, unless its
        // accesses are in lane order.
        let second = region
            .clone()
            .filter(|&pc| memory_access(&self.kernel.insts[pc].op))
            .nth(1);
        // Accesses in lane order run together as scalar code.
        if let Some(k) =
            second.filter(|_| !vector && !lane_ordered(self.kernel, self.info, &region))
        {
            self.build_range(region.start..k)?;
            return self.build_range(k..region.end);
        }
        let start = region.start as u32;
        self.enter_instruction(start);
        self.region_last = region.end - 1;
        self.load_bases();
        let entry_insts = self.insts;
        let mask = self.mask;
        // Every predicate the region uses rides along the loops as a block parameter.
        let mut preds: Vec<Pred> = Vec::new();
        for pc in region.clone() {
            for p in self.kernel.insts[pc].pred_uses() {
                if !p.is_pt() && !preds.contains(&p) {
                    preds.push(p);
                }
            }
        }
        let first = self.b.create_block();
        let after = self.b.create_block();
        let mut entry_preds = Vec::new();
        for &p in &preds {
            self.b.append_block_param(after, I32);
            entry_preds.push(self.load_pred(p));
        }
        let after_args: Vec<BlockArg> = entry_preds.iter().map(|&v| arg(v)).collect();
        self.b.ins().brif(mask, first, &[], after, &after_args);
        self.b.switch_to_block(first);
        self.pred_cache = preds.iter().map(|p| p.0).zip(entry_preds).collect();
        // Invariant writers run once, before the loops (`invariant.rs`); the loops read their
        // values from the register caches.
        self.reg_cache.clear();
        for pc in region.clone() {
            if self.is_invariant_writer(&self.kernel.insts[pc]) {
                self.emit_invariant(pc)?;
            }
        }
        let hoisted_values = std::mem::take(&mut self.reg_cache);
        // Lane-constant predicates: one write for all the region's lanes.
        for pc in region.clone() {
            if let Some((p, set)) = self.lane_constant_write(&self.kernel.insts[pc]) {
                let old = self.load_pred(p);
                let bits = self.iconst(I32, i64::from(set));
                let new = self.b.ins().bitselect(mask, bits, old);
                match self.pred_cache.iter_mut().find(|e| e.0 == p.0) {
                    Some(e) => e.1 = new,
                    None => return Err(self.internal("a region's predicate outside its set")),
                }
            }
        }
        let pcs = self.unhoisted(&region);
        // Both copies of the chunk loop, unless it is the last vector memory loop left or no
        // group can hold 32 lanes (vISA's SIMD8 and SIMD16 kernels).
        let mut whole_warp_copy = self.kernel.warp_size == 32;
        if vector && self.has_memory_access(&region) {
            whole_warp_copy &= self.vector_memory_left >= 2;
            self.vector_memory_left -= if whole_warp_copy { 2 } else { 1 };
        }
        let result = if pcs.is_empty() {
            Ok(())
        } else if vector {
            self.vector_loop(
                &pcs,
                &preds,
                &hoisted_values,
                (entry_insts, region.start),
                whole_warp_copy,
            )
        } else {
            self.lane_major_loop(&pcs, &preds, &hoisted_values, entry_insts, region.start)
        };
        let carried = self.carried_preds(&preds);
        self.reg_cache.clear();
        self.pred_cache.clear();
        result?;
        let carried = carried?;
        let out_args: Vec<BlockArg> = carried.iter().map(|&v| arg(v)).collect();
        self.b.ins().jump(after, &out_args);

        self.b.switch_to_block(after);
        let finals = self.b.block_params(after).to_vec();
        for (&p, &v) in preds.iter().zip(&finals) {
            self.b
                .ins()
                .store(self.flags.state, v, self.preds, i32::from(p.0) * 4);
        }
        self.mask = mask;
        for pc in region.clone() {
            let inst = &self.kernel.insts[pc];
            if let Op::Atomic(a) = &inst.op {
                if !a.spin && !inst.guard.is_never() {
                    self.pc = pc as u32;
                    let exec = self.exec_mask(inst.guard)?;
                    self.count_atomics(a.op, exec, u16::from(a.access.vector));
                }
            }
        }
        self.insts = self.b.ins().iadd_imm_s(entry_insts, region.len() as i64);
        self.fall_through(region.end, mask);
        Ok(())
    }

    /// The current masks of a fused region's predicates `preds` (`self.pred_cache`).
    fn carried_preds(&self, preds: &[Pred]) -> Result<Vec<Value>, JitError> {
        preds
            .iter()
            .map(|p| self.pred_cache.iter().find(|e| e.0 == p.0).map(|e| e.1))
            .collect::<Option<Vec<Value>>>()
            .ok_or_else(|| self.internal("a fused region lost a predicate's mask"))
    }

    /// The lane loop of a fused region: every instruction of `pcs` for one lane of the
    /// region's mask, then the next lane; the region's predicates are carried as masks (their
    /// current values are in `self.pred_cache`, and stay there, updated).
    fn lane_major_loop(
        &mut self,
        pcs: &[usize],
        preds: &[Pred],
        hoisted_values: &[(u16, Value)],
        entry_insts: Value,
        region_start: usize,
    ) -> Result<(), JitError> {
        let mask = self.mask;
        let body_blk = self.b.create_block();
        let exit = self.b.create_block();
        self.b.append_block_param(body_blk, I32);
        let mut entry_args = vec![arg(mask)];
        for v in self.carried_preds(preds)? {
            self.b.append_block_param(body_blk, I32);
            self.b.append_block_param(exit, I32);
            entry_args.push(arg(v));
        }
        self.b.ins().jump(body_blk, &entry_args);

        self.b.switch_to_block(body_blk);
        let params = self.b.block_params(body_blk).to_vec();
        let rest = params[0];
        let lane = self.lane_at(rest);
        self.fused = Some(lane);
        self.reg_cache = hoisted_values.to_vec();
        self.pred_cache = preds
            .iter()
            .map(|p| p.0)
            .zip(params[1..].iter().copied())
            .collect();
        let result = self.build_region_body(pcs, entry_insts, mask, region_start);
        self.fused = None;
        self.reg_cache.clear();
        result?;
        // `write_pred` only replaces entries, so every predicate is still in the cache.
        let carried = self.carried_preds(preds)?;
        let rest_minus_one = self.b.ins().iadd_imm_s(rest, -1);
        let next = self.b.ins().band(rest, rest_minus_one);
        let mut loop_args = vec![arg(next)];
        loop_args.extend(carried.iter().map(|&v| arg(v)));
        let out_args: Vec<BlockArg> = carried.iter().map(|&v| arg(v)).collect();
        self.b
            .ins()
            .brif(next, body_blk, &loop_args, exit, &out_args);

        self.b.switch_to_block(exit);
        let finals = self.b.block_params(exit).to_vec();
        self.pred_cache = preds.iter().map(|p| p.0).zip(finals).collect();
        self.mask = mask;
        Ok(())
    }

    /// The instructions `pcs` of a fused region for the current lane.
    fn build_region_body(
        &mut self,
        pcs: &[usize],
        entry_insts: Value,
        mask: Value,
        region_start: usize,
    ) -> Result<(), JitError> {
        self.earlier_atomics.clear();
        for &pc in pcs {
            self.pc = pc as u32;
            self.insts = self
                .b
                .ins()
                .iadd_imm_s(entry_insts, (pc - region_start + 1) as i64);
            self.mask = mask;
            let inst = &self.kernel.insts[pc];
            let flow = match self.translate_inst(inst) {
                Ok(flow) => flow,
                Err(e) => {
                    self.earlier_atomics.clear();
                    return Err(e);
                }
            };
            if let Op::Atomic(a) = &inst.op {
                if !a.spin && !inst.guard.is_never() {
                    let elements = u16::from(a.access.vector);
                    self.earlier_atomics.push((a.op, inst.guard, elements));
                }
            }
            match flow {
                Flow::Next(m) if m == mask => {}
                Flow::Next(_) | Flow::Done => {
                    self.earlier_atomics.clear();
                    return Err(self.internal("a fused instruction changed the group's mask"));
                }
            }
        }
        self.earlier_atomics.clear();
        Ok(())
    }

    /// `stats.atomics[op] += popcount(exec) * elements` (a vector atomic is one atomic per
    /// element).
    pub(super) fn count_atomics(&mut self, op: crate::ir::AtomicOp, exec: Value, elements: u16) {
        let n = self.b.ins().popcnt(exec);
        let n = self.b.ins().uextend(I64, n);
        let n = if elements > 1 {
            self.b.ins().imul_imm_s(n, i64::from(elements))
        } else {
            n
        };
        self.stat_add(warp_ctx::off::stat_atomic(op), n);
    }

    /// Dispatches one instruction to its `translate_*` function. Per-lane ops run for the
    /// executing lanes (`mask & guard`; nothing at all under `@!PT`).
    fn translate_inst(&mut self, inst: &'a Inst) -> Result<Flow, JitError> {
        let g = inst.guard;
        match &inst.op {
            Op::Nop => Ok(Flow::Next(self.mask)),
            &Op::Mov { ty, dst, src } => self.per_lane(g, |t, e| t.translate_mov(e, ty, dst, src)),
            &Op::ReadSpecial { dst, sr } => {
                self.per_lane(g, |t, e| t.translate_read_special(e, dst, sr))
            }
            &Op::Unary { op, ty, dst, a } => {
                self.per_lane(g, |t, e| t.translate_unary(e, op, ty, dst, a))
            }
            &Op::Binary {
                op,
                ty,
                dst,
                a,
                b,
                ftz,
            } => self.per_lane(g, |t, e| t.translate_binary(e, op, ty, dst, a, b, ftz)),
            &Op::IAdd3 {
                dst,
                carry_out,
                a,
                b,
                c,
                carry_in,
            } => self.per_lane(g, |t, e| {
                t.translate_iadd3(e, dst, carry_out, [a, b, c], carry_in)
            }),
            &Op::Imad {
                mode,
                signed,
                dst,
                a,
                b,
                c,
            } => self.per_lane(g, |t, e| t.translate_imad(e, mode, signed, dst, [a, b, c])),
            &Op::Lea {
                hi,
                sx32,
                dst,
                carry_out,
                a,
                b,
                c,
                shift,
                carry_in,
            } => self.per_lane(g, |t, e| {
                t.translate_lea(e, hi, sx32, dst, carry_out, [a, b, c], shift, carry_in)
            }),
            &Op::Shf(s) => self.per_lane(g, |t, e| t.translate_shf(e, s)),
            &Op::Lop3 {
                dst,
                pred_out,
                a,
                b,
                c,
                lut,
            } => self.per_lane(g, |t, e| t.translate_lop3(e, dst, pred_out, [a, b, c], lut)),
            &Op::SetP {
                cmp,
                ty,
                combine,
                dst,
                dst2,
                a,
                b,
                c,
                chain,
            } => self.per_lane(g, |t, e| {
                t.translate_setp(e, cmp, ty, combine, [dst, dst2], [a, b], c, chain)
            }),
            &Op::PredLogic { op, dst, a, b } => {
                self.per_lane(g, |t, e| t.translate_pred_logic(e, op, dst, [a, b]))
            }
            &Op::PredMove(m) => self.per_lane(g, |t, e| t.translate_pred_move(e, m)),
            &Op::Select {
                ty,
                dst,
                a,
                b,
                pred,
            } => self.per_lane(g, |t, e| t.translate_select(e, ty, dst, [a, b], pred)),
            &Op::Convert {
                dst_ty,
                src_ty,
                round,
                ftz,
                dst,
                a,
            } => self.per_lane(g, |t, e| {
                t.translate_convert(e, dst_ty, src_ty, round, ftz, dst, a)
            }),
            &Op::Vote {
                mode,
                dst,
                dst_pred,
                src,
            } => self.per_lane(g, |t, e| t.translate_vote(e, mode, dst, dst_pred, src)),
            Op::Load { access, dst } => match access.addr.surface() {
                Some(s) => self.translate_surface(g, access, s, surface::SurfaceOp::Load(*dst)),
                None => self.translate_load(g, access, *dst),
            },
            Op::Store { access, src } => match access.addr.surface() {
                Some(s) => self.translate_surface(g, access, s, surface::SurfaceOp::Store(*src)),
                None => self.translate_store(g, access, *src),
            },
            Op::Atomic(a) => match a.access.addr.surface() {
                Some(s) => self.translate_surface(g, &a.access, s, surface::SurfaceOp::Atomic(a)),
                None => self.translate_atomic(g, a),
            },
            Op::Fence { order, scope } => self.translate_fence(g, *order, *scope),
            Op::Barrier { id } => self.translate_barrier(g, *id),
            Op::Branch { target, uniform } => self.translate_branch(g, *target, *uniform),
            Op::BranchConverged {
                target,
                mask,
                diverged,
            } => self.translate_branch_converged(g, *target, *mask, *diverged),
            Op::WarpSplit {
                mask,
                rejoin: _,
                wait,
            } => self.translate_warp_split(g, *mask, *wait),
            Op::Exit => self.translate_exit(g),
            Op::IsSpace { space, dst, addr } => {
                self.per_lane(g, |t, e| t.translate_is_space(e, *space, *dst, addr))
            }
            &Op::PackHalves { ty, dst, hi, lo } => self.per_lane(g, |t, e| {
                t.call_slow(
                    crate::jit::slow::SlowOp::Pack(crate::jit::slow::SlowPack { ty, dst, hi, lo }),
                    e,
                );
                Ok(())
            }),
            &Op::Shfl {
                mode,
                dst,
                dst_pred,
                a,
                b,
                c,
            } => self.per_lane(g, |t, e| t.translate_shfl(e, mode, dst, dst_pred, a, b, c)),
            &Op::Redux { op, ty, dst, src } => {
                self.per_lane(g, |t, e| t.translate_redux(e, op, ty, dst, src))
            }
            &Op::Match {
                all,
                ty,
                dst,
                dst_pred,
                src,
            } => self.per_lane(g, |t, e| t.translate_match(e, all, ty, dst, dst_pred, src)),
            &Op::Prmt { dst, a, b, sel } => {
                self.per_lane(g, |t, e| t.translate_prmt(e, dst, [a, b, sel]))
            }
            &Op::Bfe {
                ty,
                dst,
                a,
                pos,
                len,
            } => self.per_lane(g, |t, e| t.translate_bfe(e, ty, dst, a, [pos, len])),
            &Op::Bfi {
                ty,
                dst,
                insert,
                base,
                pos,
                len,
            } => self.per_lane(g, |t, e| {
                t.translate_bfi(e, ty, dst, [insert, base], [pos, len])
            }),
            &Op::Fma {
                ty,
                dst,
                a,
                b,
                c,
                round,
                ftz,
                halves,
            } => self.per_lane(g, |t, e| {
                t.translate_fma(e, ty, dst, [a, b, c], round, ftz, halves)
            }),
            &Op::PackedMinMax { op, ty, dst, a, b } => {
                self.per_lane(g, |t, e| t.translate_packed_min_max(e, op, ty, dst, [a, b]))
            }
            &Op::PredLut { dst, a, b, c, lut } => {
                self.per_lane(g, |t, e| t.translate_pred_lut(e, dst, [a, b, c], lut))
            }
        }
    }

    /// Runs `body` with the executing lanes (`mask & guard`) of a per-lane op whose guard can
    /// hold, then continues with the group's mask.
    fn per_lane(
        &mut self,
        g: Guard,
        body: impl FnOnce(&mut Self, Value) -> Result<(), JitError>,
    ) -> Result<Flow, JitError> {
        if !g.is_never() {
            let exec = self.exec_mask(g)?;
            let exec = if self.lowest_lane_only {
                let neg = self.b.ins().ineg(exec);
                self.b.ins().band(exec, neg)
            } else {
                exec
            };
            body(self, exec)?;
        }
        Ok(Flow::Next(self.mask))
    }

    // ---- errors ----------------------------------------------------------------------------

    fn unsupported(&self, what: impl Into<String>) -> JitError {
        JitError::Unsupported {
            kernel: self.kernel.name.clone(),
            pc: self.pc,
            what: what.into(),
        }
    }

    /// A broken invariant of the translator itself (never a property of the kernel: the
    /// kernel is validated, [`KernelInfo::is_for`]).
    fn internal(&self, what: impl Into<String>) -> JitError {
        JitError::Internal {
            kernel: self.kernel.name.clone(),
            pc: self.pc,
            what: what.into(),
        }
    }

    // ---- exits -------------------------------------------------------------------------------

    /// Returns `event` to the scheduler (payload already written).
    fn ret_event(&mut self, event: Event) {
        let code = self.b.ins().iconst(I32, event as i64);
        self.b
            .ins()
            .jump(self.ret_block, &[arg(code), arg(self.insts)]);
    }

    fn store_out(&mut self, offset: i32, v: Value) {
        self.b.ins().store(self.flags.state, v, self.ctx, offset);
    }

    fn store_out_const(&mut self, offset: i32, v: u32) {
        let c = self.b.ins().iconst(I32, v as i64);
        self.store_out(offset, c);
    }

    /// `exited |= lanes`.
    fn exit_lanes(&mut self, lanes: Value) {
        let old = self
            .b
            .ins()
            .load(I32, self.flags.state, self.ctx, off::EXITED);
        let new = self.b.ins().bor(old, lanes);
        self.b
            .ins()
            .store(self.flags.state, new, self.ctx, off::EXITED);
    }

    /// Jumps to the trap block for `lane` faulting on an access of `size` bytes in `space` at
    /// `addr` (the reason, misaligned or out of range, follows from `addr` and `size`).
    fn jump_trap(&mut self, lane: Value, space: Space, size: u32, addr: Value) {
        if let Some((pc, mask, insts)) = self.deopt {
            self.store_out_const(off::OUT_A, pc);
            self.store_out(off::OUT_B, mask);
            let code = self.b.ins().iconst(I32, Event::Interpret as i64);
            self.b.ins().jump(self.ret_block, &[arg(code), arg(insts)]);
            return;
        }
        // Each (cold) fault block writes the payload and its instruction count into the
        // context and jumps to the shared trap exit, which takes no block parameters: a join of
        // hundreds of fault edges with parameters makes register allocation merge their values
        // into long-lived bundles, which costs far more compile time than these stores. The
        // site number stands for pc, space and size (`SideTables::trap_sites`), so a fault
        // block is four stores (five at an atomic).
        // At an atomic, the executing lanes go along: the lanes before the faulting one have
        // performed it and are counted by the trap exit in Rust, off the generated code.
        let site = self.tables.trap_sites.len() as u32;
        self.tables.trap_sites.push(super::slow::TrapSite {
            pc: self.pc,
            space,
            size,
            atomic: self.atomic_exec.map(|(op, _, n)| (op, n)),
            surface: self.surface_trap,
        });
        if let Some((_, exec, _)) = self.atomic_exec {
            self.store_out(off::OUT_C, exec);
        }
        // The earlier atomics of a region in lane order were performed by all their lanes.
        for (op, guard, elements) in self.earlier_atomics.clone() {
            if let Ok(exec) = self.exec_mask(guard) {
                self.count_atomics(op, exec, elements);
            }
        }
        self.store_out_const(off::OUT_A, site);
        self.store_out(off::OUT_B, lane);
        self.b
            .ins()
            .store(self.flags.state, addr, self.ctx, off::OUT_ADDR);
        self.b
            .ins()
            .store(self.flags.state, self.insts, self.ctx, off::OUT_INSTS);
        self.b.ins().jump(self.trap_block, &[]);
    }

    // ---- masks, guards, predicates ----------------------------------------------------------

    /// The lane mask of predicate `p` (not PT).
    fn load_pred(&mut self, p: Pred) -> Value {
        if let Some(&(_, v)) = self.pred_cache.iter().find(|e| e.0 == p.0) {
            return v;
        }
        self.b
            .ins()
            .load(I32, self.flags.state, self.preds, i32::from(p.0) * 4)
    }

    /// The lanes where `src` is true, as a mask.
    fn pred_mask(&mut self, src: PredSrc) -> Result<Value, JitError> {
        Ok(if src.pred.is_pt() {
            self.b
                .ins()
                .iconst(I32, if src.negate { 0 } else { -1i64 as u32 as i64 })
        } else {
            let m = self.load_pred(src.pred);
            if src.negate {
                self.b.ins().bnot(m)
            } else {
                m
            }
        })
    }

    /// `mask & guard`: the lanes that execute the current instruction.
    fn exec_mask(&mut self, guard: Guard) -> Result<Value, JitError> {
        let g = self.pred_mask(PredSrc {
            pred: guard.pred,
            negate: guard.negate,
        })?;
        Ok(if guard.is_always() {
            self.mask
        } else {
            self.b.ins().band(self.mask, g)
        })
    }

    /// `p = (p & !exec) | (bits & exec)`; writes to PT are discarded.
    fn write_pred(&mut self, p: Pred, exec: Value, bits: Value) -> Result<(), JitError> {
        if p.is_pt() {
            return Ok(());
        }
        let old = self.load_pred(p);
        if let Some(lane) = self.fused {
            // Only this lane's bit: `bits` holds no other lane's result here.
            let one = self.iconst(I32, 1);
            let lane_bit = self.b.ins().ishl(one, lane.index);
            let exec = self.b.ins().band(exec, lane_bit);
            let new = self.b.ins().bitselect(exec, bits, old);
            match self.pred_cache.iter_mut().find(|e| e.0 == p.0) {
                Some(e) => e.1 = new,
                None => {
                    return Err(self.internal("a fused predicate write outside the region's set"))
                }
            }
            return Ok(());
        }
        let new = self.b.ins().bitselect(exec, bits, old);
        self.b
            .ins()
            .store(self.flags.state, new, self.preds, i32::from(p.0) * 4);
        Ok(())
    }

    /// Bit `lane` of `mask`, as an i32 0 or 1.
    fn lane_bit_of(&mut self, mask: Value, lane: &Lane) -> Value {
        let s = self.b.ins().ushr(mask, lane.index);
        self.b.ins().band_imm_s(s, 1)
    }

    /// `(b ? 1 : 0) << lane` for an i8 boolean `b`.
    fn bool_to_lane_bit(&mut self, b: Value, lane: &Lane) -> Value {
        let v = self.b.ins().uextend(I32, b);
        self.b.ins().ishl(v, lane.index)
    }

    // ---- lane loops ----------------------------------------------------------------------

    /// Runs `body` for each set bit of `exec`, in increasing lane order, threading `carried`
    /// values through the iterations; returns their final values.
    ///
    /// One loop shape serves every family: `lane = ctz(rest); rest &= rest - 1`. For a full
    /// warp it costs what a counted 32-lane loop costs (one bit-scan and one `blsr`-style and
    /// against an increment and a bit test), and for the sparse masks of divergent code and
    /// single-lane critical sections it visits only the executing lanes.
    fn lane_loop(
        &mut self,
        exec: Value,
        carried: &[Value],
        body: impl FnOnce(&mut Self, &Lane, &[Value]) -> Result<Vec<Value>, JitError>,
    ) -> Result<Vec<Value>, JitError> {
        if let Some(lane) = self.fused {
            if exec == self.mask {
                return body(self, &lane, carried);
            }
            let bit = self.lane_bit_of(exec, &lane);
            let run = self.b.create_block();
            let cont = self.b.create_block();
            for &v in carried {
                let ty = self.b.func.dfg.value_type(v);
                self.b.append_block_param(cont, ty);
            }
            let skip_args: Vec<BlockArg> = carried.iter().map(|&v| arg(v)).collect();
            self.b.ins().brif(bit, run, &[], cont, &skip_args);
            self.b.switch_to_block(run);
            // Values defined in `run` do not dominate `cont`: afterwards the caches keep only
            // entries the body neither added nor replaced.
            let regs_before = self.reg_cache.clone();
            let preds_before = self.pred_cache.clone();
            let out = body(self, &lane, carried)?;
            let regs_after = std::mem::replace(&mut self.reg_cache, regs_before);
            self.reg_cache.retain(|e| regs_after.contains(e));
            if self.pred_cache != preds_before {
                return Err(self.internal("a predicate written inside a fused lane body"));
            }
            let out_args: Vec<BlockArg> = out.iter().map(|&v| arg(v)).collect();
            self.b.ins().jump(cont, &out_args);
            self.b.switch_to_block(cont);
            return Ok(self.b.block_params(cont).to_vec());
        }
        let types: Vec<Type> = carried
            .iter()
            .map(|&v| self.b.func.dfg.value_type(v))
            .collect();
        let body_blk = self.b.create_block();
        let after = self.b.create_block();
        self.b.append_block_param(body_blk, I32);
        for &ty in &types {
            self.b.append_block_param(body_blk, ty);
            self.b.append_block_param(after, ty);
        }
        let mut args = vec![arg(exec)];
        args.extend(carried.iter().map(|&v| arg(v)));
        let after_args: Vec<BlockArg> = carried.iter().map(|&v| arg(v)).collect();
        self.b.ins().brif(exec, body_blk, &args, after, &after_args);

        self.b.switch_to_block(body_blk);
        let p = self.b.block_params(body_blk).to_vec();
        let rest = p[0];
        let lane = self.lane_at(rest);
        let rest_minus_one = self.b.ins().iadd_imm_s(rest, -1);
        let next = self.b.ins().band(rest, rest_minus_one);
        let out = body(self, &lane, &p[1..])?;
        let mut args = vec![arg(next)];
        args.extend(out.iter().map(|&v| arg(v)));
        let after_args: Vec<BlockArg> = out.iter().map(|&v| arg(v)).collect();
        self.b.ins().brif(next, body_blk, &args, after, &after_args);

        self.b.switch_to_block(after);
        Ok(self.b.block_params(after).to_vec())
    }

    /// The lowest set lane of `rest` and its register-file row.
    fn lane_at(&mut self, rest: Value) -> Lane {
        let index = self.b.ins().ctz(rest);
        let index64 = self.b.ins().uextend(I64, index);
        let byte = self.b.ins().ishl_imm_s(index64, 2);
        let row = self.b.ins().iadd(self.regs, byte);
        Lane { index, row }
    }

    // ---- registers and operands ----------------------------------------------------------

    fn read_reg32(&mut self, lane: &Lane, r: Reg) -> Value {
        if r.is_rz() {
            return self.b.ins().iconst(I32, 0);
        }
        if let Some(&(_, v)) = self.reg_cache.iter().find(|e| e.0 == r.0) {
            return v;
        }
        let v = self.b.ins().load(
            I32,
            self.flags.regs,
            lane.row,
            i32::from(r.0) * REG_ROW_BYTES,
        );
        self.cache_reg(r, v);
        v
    }

    /// Whether a value written to `r` by the current instruction must reach the register file:
    /// a later instruction of the fused region may read it from memory, or `r` is live after
    /// the region (`KernelInfo::live_out`) and no later instruction of the region rewrites it
    /// in every lane that runs this one (an unguarded rewrite: it stores the value that
    /// survives, if any must). Later reads come from the register cache when this write is
    /// unguarded (it dominates the rest of the lane's pass) and no guarded write to `r` comes
    /// between (its value would be dropped from the cache at the join); an unguarded rewrite
    /// of `r` ends the search.
    fn store_needed(&self, r: Reg) -> bool {
        self.store_needed_in(r, true)
    }

    /// [`Self::store_needed`], with `rewrites_elide` false: a value live after the region is
    /// stored even when a later instruction of the region rewrites it.
    pub(super) fn store_needed_in(&self, r: Reg, rewrites_elide: bool) -> bool {
        // Other lanes read these: a uniform register (the broadcast copies the stored value),
        // a register some `SHFL` reads across lanes.
        if self.kernel.uniform.has_reg(r) || self.cross_lane.contains(&r) {
            return true;
        }
        let at = self.region_last.checked_sub(self.range.start);
        let Some(live) = at.and_then(|i| self.live_after.get(i)) else {
            return true;
        };
        let i = usize::from(r.0);
        let live_out = live.get(i / 64).is_none_or(|w| w >> (i % 64) & 1 != 0);
        if live_out && !rewrites_elide {
            return true;
        }
        let reads = |inst: &Inst| inst.op.reads_reg(r);
        let writes = |inst: &Inst| inst.op.writes_reg(r);
        let rewrites = |inst: &Inst| writes(inst) && inst.guard.is_always();
        let pc = self.pc as usize;
        let later = &self.kernel.insts[pc + 1..=self.region_last.max(pc)];
        if !self.kernel.insts[pc].guard.is_always() {
            return later.iter().any(reads) || (live_out && !later.iter().any(rewrites));
        }
        for inst in later {
            if inst.guard.is_never() {
                continue;
            }
            if writes(inst) {
                // An unguarded rewrite: reads up to here hit the cache, and the rewrite's own
                // reads came first. A guarded one may drop the cached value: be safe.
                return !inst.guard.is_always();
            }
        }
        live_out
    }

    /// Records `v` as register `r`'s current value for the rest of the fused lane pass.
    fn cache_reg(&mut self, r: Reg, v: Value) {
        if self.fused.is_none() {
            return;
        }
        self.reg_cache.retain(|e| e.0 != r.0);
        self.reg_cache.push((r.0, v));
    }

    fn read_reg64(&mut self, lane: &Lane, r: Reg) -> Value {
        if r.is_rz() {
            return self.b.ins().iconst(I64, 0);
        }
        let lo = self.read_reg32(lane, r);
        let hi = self.read_reg32(lane, r.word(1));
        if let Some(&v) = self.pairs.get(&(lo, hi)) {
            return v;
        }
        self.concat(lo, hi)
    }

    /// `(hi << 32) | lo` as i64.
    fn concat(&mut self, lo: Value, hi: Value) -> Value {
        let lo = self.b.ins().uextend(I64, lo);
        let hi = self.b.ins().uextend(I64, hi);
        let hi = self.b.ins().ishl_imm_s(hi, 32);
        self.b.ins().bor(lo, hi)
    }

    fn write_reg32(&mut self, lane: &Lane, r: Reg, v: Value) {
        if r.is_rz() {
            return;
        }
        if self.splatting || !self.store_needed(r) {
            // Dead: no instruction after this one can read it (the register cache still
            // serves this lane's pass).
            self.cache_reg(r, v);
            return;
        }
        self.b
            .ins()
            .store(self.flags.regs, v, lane.row, i32::from(r.0) * REG_ROW_BYTES);
        self.cache_reg(r, v);
    }

    fn write_reg64(&mut self, lane: &Lane, r: Reg, v: Value) {
        if r.is_rz() {
            return;
        }
        let lo = self.b.ins().ireduce(I32, v);
        let hi = self.b.ins().ushr_imm_s(v, 32);
        let hi = self.b.ins().ireduce(I32, hi);
        self.pairs.insert((lo, hi), v);
        self.write_reg32(lane, r, lo);
        self.write_reg32(lane, r.word(1), hi);
    }

    /// Writes a value of `words` 32-bit words (an i32 for 1, an i64 for 2, an i128 for the
    /// quad of 4).
    fn write_reg(&mut self, lane: &Lane, r: Reg, words: u16, v: Value) {
        match words {
            4 => {
                if r.is_rz() {
                    return;
                }
                let (lo, hi) = self.b.ins().isplit(v);
                self.write_reg64(lane, r, lo);
                self.write_reg64(lane, r.word(2), hi);
            }
            2 => self.write_reg64(lane, r, v),
            _ => self.write_reg32(lane, r, v),
        }
    }

    /// Reads an operand of `words` words (i32 or i64). Reads of constant bank 0 are movable
    /// loads (Cranelift hoists them out of lane loops); the kernel's other banks are fixed
    /// bytes of the kernel ([`crate::ir::ConstBank`]), so their reads are constants.
    fn read_operand(&mut self, lane: &Lane, op: Operand, words: u16) -> Result<Value, JitError> {
        if words == 4 {
            // A quad (`Ty::B128`): validation admits only registers.
            let Operand::Reg(r) = op else {
                return Err(self.unsupported("a 128-bit operand that is not a register"));
            };
            let lo = self.read_reg64(lane, r);
            let hi = self.read_reg64(lane, r.word(2));
            return Ok(self.b.ins().iconcat(lo, hi));
        }
        match op {
            Operand::Reg(r) if words == 2 => Ok(self.read_reg64(lane, r)),
            Operand::Reg(r) => Ok(self.read_reg32(lane, r)),
            Operand::Imm(_) | Operand::Const { .. } => self.uniform_operand(op, words),
        }
    }

    /// An immediate or constant-bank operand of `words` words (1 or 2): the same value in
    /// every lane.
    fn uniform_operand(&mut self, op: Operand, words: u16) -> Result<Value, JitError> {
        let ty = if words == 2 { I64 } else { I32 };
        Ok(match op {
            Operand::Reg(_) => return Err(self.internal("a register read as a uniform operand")),
            Operand::Imm(v) => {
                let v = if words == 2 {
                    v as i64
                } else {
                    v as u32 as i64
                };
                self.b.ins().iconst(ty, v)
            }
            Operand::Const { bank: 0, offset } => {
                let base = self
                    .b
                    .ins()
                    .load(I64, self.flags.state_const, self.ctx, off::CBANK);
                self.b.ins().load(ty, self.flags.cbank, base, offset as i32)
            }
            Operand::Const { bank, offset } => {
                let kernel = self.kernel;
                let Some(v) = kernel
                    .launch
                    .const_bank(bank)
                    .and_then(|b| b.read(offset, words))
                else {
                    return Err(self.internal(format!(
                        "c[{bank:#x}][{offset:#x}] lies outside the kernel's constant banks"
                    )));
                };
                self.b.ins().iconst(ty, v as i64)
            }
        })
    }

    /// Reads a source of type `ty` (an i32, or an i64 for 64-bit types) and applies its
    /// modifier in `ty`. Integer sources narrower than 32 bits are first brought to their
    /// canonical form (see [`Self::narrow`]); then `Neg` is two's complement, `Not` the
    /// complement, `Abs` the wrapping absolute value and `NegAbs` its negation. For floats the
    /// modifiers are sign-bit operations (`Not` complements the bits). Bits above the type's
    /// width may be left non-canonical: users narrow results where the type is narrow.
    fn read_src(&mut self, lane: &Lane, src: &Src, ty: Ty) -> Result<Value, JitError> {
        let words = ty.regs();
        let v = self.read_operand(lane, src.operand, words)?;
        let v = if ty.is_int() { self.narrow(v, ty) } else { v };
        Ok(self.apply_modifier(v, src.modifier, ty))
    }

    /// Works on i32/i64 values and, for integer types, on `i32x4` lanes (`simd/`).
    fn apply_modifier(&mut self, v: Value, m: SrcMod, ty: Ty) -> Value {
        let vt = self.b.func.dfg.value_type(v);
        let sign = 1i64.wrapping_shl(ty.bits() - 1);
        let sign = if vt == I32 { sign as u32 as i64 } else { sign };
        match m {
            SrcMod::None => v,
            SrcMod::Not => self.b.ins().bnot(v),
            SrcMod::Neg if ty.is_float() => self.b.ins().bxor_imm_s(v, sign),
            SrcMod::Neg => self.b.ins().ineg(v),
            SrcMod::Abs if ty.is_float() => self.b.ins().band_imm_s(v, !sign),
            SrcMod::Abs => self.b.ins().iabs(v),
            SrcMod::NegAbs if ty.is_float() => self.b.ins().bor_imm_s(v, sign),
            SrcMod::NegAbs => {
                let a = self.b.ins().iabs(v);
                self.b.ins().ineg(a)
            }
        }
    }

    /// A register value of a type narrower than 32 bits brought to its register form: the low
    /// bits extended by the type's signedness (sign for `s8`/`s16`, zero otherwise, floats
    /// included). 32- and 64-bit types are unchanged. Used on inputs (whatever the register's
    /// upper bits hold) and on results (which wrap modulo 2^bits).
    fn narrow(&mut self, v: Value, ty: Ty) -> Value {
        let bits = ty.bits();
        if bits >= 32 {
            return v;
        }
        if ty.is_signed_int() {
            let s = self.b.ins().ishl_imm_s(v, i64::from(32 - bits));
            self.b.ins().sshr_imm_s(s, i64::from(32 - bits))
        } else {
            self.b.ins().band_imm_s(v, (1i64 << bits) - 1)
        }
    }

    /// An i8 boolean `v != 0`.
    fn is_nonzero(&mut self, v: Value) -> Value {
        self.b.ins().icmp_imm_s(IntCC::NotEqual, v, 0)
    }

    /// The i32/i64 constant of the given type.
    fn iconst(&mut self, ty: Type, v: i64) -> Value {
        // Cranelift wants narrow immediates zero-extended.
        let v = if ty == I32 { v as u32 as i64 } else { v };
        self.b.ins().iconst(ty, v)
    }

    /// `stats[offset] += v` (an i64).
    fn stat_add(&mut self, offset: i32, v: Value) {
        let old = self.b.ins().load(I64, self.flags.state, self.stats, offset);
        let new = self.b.ins().iadd(old, v);
        self.b
            .ins()
            .store(self.flags.state, new, self.stats, offset);
    }

    fn stat_incr(&mut self, offset: i32) {
        let one = self.b.ins().iconst(I64, 1);
        self.stat_add(offset, one);
    }

    /// A signature `(ptr, i32, i32)` for slow-path calls.
    fn slow_sig(&mut self) -> SigRef {
        if let Some(s) = self.convert_sig {
            return s;
        }
        let call_conv = self.b.func.signature.call_conv;
        let mut sig = cranelift_codegen::ir::Signature::new(call_conv);
        sig.params.push(cranelift_codegen::ir::AbiParam::new(I64));
        sig.params.push(cranelift_codegen::ir::AbiParam::new(I32));
        sig.params.push(cranelift_codegen::ir::AbiParam::new(I32));
        let s = self.b.import_signature(sig);
        self.convert_sig = Some(s);
        s
    }

    /// Registers `op` in the side tables and calls `slow::slow_lanes` for lanes `exec` (once per
    /// warp-instruction; never inside a fused region, see [`Fusion`]).
    pub(super) fn call_slow(&mut self, op: super::slow::SlowOp, exec: Value) {
        let index = self.tables.slow_ops.len() as i64;
        self.tables.slow_ops.push(op);
        let sig = self.slow_sig();
        let f = self
            .b
            .ins()
            .load(I64, self.flags.state_const, self.ctx, off::SLOW_LANES);
        let idx = self.iconst(I32, index);
        self.b.ins().call_indirect(sig, f, &[self.ctx, idx, exec]);
    }

    /// The signature `(i32, i32, i64, i64, i32) -> i64` of `WarpCtx::rmw_value`.
    fn rmw_sig(&mut self) -> SigRef {
        if let Some(s) = self.rmw_sig {
            return s;
        }
        let call_conv = self.b.func.signature.call_conv;
        let mut sig = cranelift_codegen::ir::Signature::new(call_conv);
        for t in [I32, I32, I64, I64, I32] {
            sig.params.push(cranelift_codegen::ir::AbiParam::new(t));
        }
        sig.returns.push(cranelift_codegen::ir::AbiParam::new(I64));
        let s = self.b.import_signature(sig);
        self.rmw_sig = Some(s);
        s
    }

    // ---- control flow ----------------------------------------------------------------------

    /// `BRA`: uniform not-taken falls through, uniform taken jumps (or yields when the target is
    /// at or before the branch, so spinning code lets other groups run), a split reports
    /// `Diverge`.
    fn translate_branch(
        &mut self,
        g: Guard,
        target: u32,
        _uniform: bool,
    ) -> Result<Flow, JitError> {
        // `uniform` (PTX `bra.uni`) is a promise the scheduler does not need: a branch marked
        // uniform that splits anyway is still reported as a divergence, which is exact.
        if target as usize >= self.kernel.insts.len() {
            return Err(self.internal(format!(
                "branch target {target} is past the last instruction"
            )));
        }
        if g.is_never() {
            return Ok(Flow::Next(self.mask));
        }
        if g.is_always() {
            self.branch_taken(target)?;
            return Ok(Flow::Done);
        }
        let taken = self.exec_mask(g)?;
        self.branch_with(taken, target)
    }

    /// [`Op::BranchConverged`]: the executing lanes all branch when the lanes `mask` names
    /// (the lowest executing lane's value) that have not exited all execute it (`BRA.CONV`),
    /// or when they do not (`BRA.DIV`).
    fn translate_branch_converged(
        &mut self,
        g: Guard,
        target: u32,
        mask: Src,
        diverged: bool,
    ) -> Result<Flow, JitError> {
        if target as usize >= self.kernel.insts.len() {
            return Err(self.internal(format!(
                "branch target {target} is past the last instruction"
            )));
        }
        self.group_branch(g, target, |t, exec| {
            // One lane's read outside any lane loop: no cached register belongs to it.
            t.reg_cache.clear();
            let lane = t.lane_at(exec);
            let named = t.read_src(&lane, &mask, Ty::U32)?;
            t.reg_cache.clear();
            let missing = t.missing_lanes(named);
            let cc = if diverged {
                IntCC::NotEqual
            } else {
                IntCC::Equal
            };
            let take = t.b.ins().icmp_imm_s(cc, missing, 0);
            let zero = t.iconst(I32, 0);
            Ok(t.b.ins().select(take, exec, zero))
        })
    }

    /// [`Op::WarpSplit`]: the executing lanes holding the smallest mask value continue when
    /// the group is complete (every live lane that value names is in it, or `wait` is false);
    /// the group's other lanes (or all of them, when it is not complete) execute the split
    /// again.
    fn translate_warp_split(&mut self, g: Guard, mask: Src, wait: bool) -> Result<Flow, JitError> {
        self.group_branch(g, self.pc, |t, exec| {
            // Lane loops read other lanes' registers: no cached register belongs to one lane.
            t.reg_cache.clear();
            let all_ones = t.iconst(I32, -1);
            let smallest = t.lane_loop(exec, &[all_ones], |t, lane, acc| {
                let v = t.read_src(lane, &mask, Ty::U32)?;
                Ok(vec![t.b.ins().umin(acc[0], v)])
            })?[0];
            let zero = t.iconst(I32, 0);
            let group = t.lane_loop(exec, &[zero], |t, lane, acc| {
                let v = t.read_src(lane, &mask, Ty::U32)?;
                let same = t.b.ins().icmp(IntCC::Equal, v, smallest);
                let one = t.iconst(I32, 1);
                let bit = t.b.ins().ishl(one, lane.index);
                let zero = t.iconst(I32, 0);
                let bit = t.b.ins().select(same, bit, zero);
                Ok(vec![t.b.ins().bor(acc[0], bit)])
            })?[0];
            t.reg_cache.clear();
            // Done (nobody splits off), split (the group's other lanes again), or wait (all).
            let others = t.b.ins().band_not(exec, group);
            let split_off = t.b.ins().band_not(t.mask, group);
            let zero = t.iconst(I32, 0);
            let proceed = t.b.ins().icmp_imm_s(IntCC::Equal, others, 0);
            let again = t.b.ins().select(proceed, zero, split_off);
            if !wait {
                return Ok(again);
            }
            let missing = t.missing_lanes(smallest);
            let complete = t.b.ins().icmp_imm_s(IntCC::Equal, missing, 0);
            Ok(t.b.ins().select(complete, again, t.mask))
        })
    }

    /// A branch to `target` taken by the executing lanes `decide` returns (given the executing
    /// lanes; it runs only when some lane executes), the others falling through.
    fn group_branch(
        &mut self,
        g: Guard,
        target: u32,
        decide: impl FnOnce(&mut Self, Value) -> Result<Value, JitError>,
    ) -> Result<Flow, JitError> {
        if g.is_never() {
            return Ok(Flow::Next(self.mask));
        }
        let exec = self.exec_mask(g)?;
        let some_blk = self.b.create_block();
        let decided = self.b.create_block();
        self.b.append_block_param(decided, I32);
        let zero = self.iconst(I32, 0);
        self.b
            .ins()
            .brif(exec, some_blk, &[], decided, &[arg(zero)]);
        self.b.switch_to_block(some_blk);
        let taken = decide(self, exec)?;
        self.b.ins().jump(decided, &[arg(taken)]);
        self.b.switch_to_block(decided);
        let taken = self.b.block_params(decided)[0];
        self.branch_with(taken, target)
    }

    /// The live lanes (launched, not exited) of `named` that are not in the group at this
    /// instruction (its guard-false lanes count as in it).
    fn missing_lanes(&mut self, named: Value) -> Value {
        let exited = self
            .b
            .ins()
            .load(I32, self.flags.state, self.ctx, off::EXITED);
        let launched = self.warp_lanes();
        let live = self.b.ins().band_not(launched, exited);
        let named_live = self.b.ins().band(named, live);
        self.b.ins().band_not(named_live, self.mask)
    }

    /// The lanes this warp launched: `warp_size` of them unless it is the CTA's last, partial
    /// warp (`ntid.x * ntid.y * ntid.z - warp_id * warp_size` of them).
    fn warp_lanes(&mut self) -> Value {
        let cst = self.flags.state_const;
        let ctx = self.ctx;
        let load = |t: &mut Self, offset: i32| t.b.ins().load(I32, cst, ctx, offset);
        let (nx, ny, nz) = (
            load(self, off::NTID),
            load(self, off::NTID + 4),
            load(self, off::NTID + 8),
        );
        let threads = self.b.ins().imul(nx, ny);
        let threads = self.b.ins().imul(threads, nz);
        let warp_id = load(self, off::WARP_ID);
        let warp_size = load(self, off::WARP_SIZE);
        let first = self.b.ins().imul(warp_id, warp_size);
        let left = self.b.ins().isub(threads, first);
        let n = self.b.ins().umin(left, warp_size);
        let n = self.b.ins().uextend(I64, n);
        let one = self.iconst(I64, 1);
        let bit = self.b.ins().ishl(one, n);
        let mask = self.b.ins().iadd_imm_s(bit, -1);
        self.b.ins().ireduce(I32, mask)
    }

    /// The branch of the lanes `taken` to `target` (the others of the group fall through): on
    /// as one group, or a divergence reported to the scheduler.
    fn branch_with(&mut self, taken: Value, target: u32) -> Result<Flow, JitError> {
        let not_taken_blk = self.b.create_block();
        let some_blk = self.b.create_block();
        let all_blk = self.b.create_block();
        let split_blk = self.b.create_block();
        self.b.ins().brif(taken, some_blk, &[], not_taken_blk, &[]);

        self.b.switch_to_block(some_blk);
        let all = self.b.ins().icmp(IntCC::Equal, taken, self.mask);
        self.b.ins().brif(all, all_blk, &[], split_blk, &[]);

        self.b.switch_to_block(all_blk);
        self.branch_taken(target)?;

        self.b.switch_to_block(split_blk);
        let fall = self.b.ins().band_not(self.mask, taken);
        let next_blk = match self.split_allowed(target) {
            Some(allowed) => {
                // Run past the split with the fall-through lanes when the caller allows it
                // (`WarpRunner::run_group_splitting`), recording it; else report it.
                let past_blk = self.b.create_block();
                let report_blk = self.b.create_block();
                let next_blk = self.b.create_block();
                self.b.append_block_param(next_blk, I32);
                self.b.ins().brif(allowed, past_blk, &[], report_blk, &[]);
                self.b.switch_to_block(past_blk);
                self.store_out_const(off::SPLIT_OK, 0);
                self.store_out_const(off::SPLIT_OUT, self.pc);
                self.store_out_const(off::SPLIT_OUT + 4, target);
                self.store_out(off::SPLIT_OUT + 8, taken);
                self.store_out(off::SPLIT_OUT + 12, fall);
                self.b.ins().jump(next_blk, &[arg(fall)]);
                self.b.switch_to_block(report_blk);
                Some(next_blk)
            }
            None => None,
        };
        self.store_out_const(off::OUT_A, self.pc);
        self.store_out_const(off::OUT_B, target);
        self.store_out(off::OUT_C, taken);
        self.store_out(off::OUT_D, fall);
        self.ret_event(Event::Diverge);

        self.b.switch_to_block(not_taken_blk);
        match next_blk {
            Some(next_blk) => {
                self.b.ins().jump(next_blk, &[arg(self.mask)]);
                self.b.switch_to_block(next_blk);
                Ok(Flow::Next(self.b.block_params(next_blk)[0]))
            }
            None => Ok(Flow::Next(self.mask)),
        }
    }

    /// Whether the code may run past a split of the branch at this pc to `target` (a nonzero
    /// `I32`), or `None` when it never may: only where the split pushes no join, that is the
    /// branch has no reconvergence point, or it is a backward branch that is one of the warp's
    /// spin exits in `ctx`; not to the next instruction (both sides would stand at one pc);
    /// and only while `ctx.split_ok` allows it.
    fn split_allowed(&mut self, target: u32) -> Option<Value> {
        let pc = self.pc;
        if target == pc + 1 {
            return None;
        }
        let reconv = self.info.reconverge().get(pc as usize).copied().flatten();
        if reconv.is_some() && target > pc {
            return None;
        }
        let (flags, ctx) = (self.flags.state, self.ctx);
        let ok = self.b.ins().load(I32, flags, ctx, off::SPLIT_OK);
        if reconv.is_none() {
            return Some(ok);
        }
        let mut exit = None;
        for slot in 0..2 {
            let e = self
                .b
                .ins()
                .load(I32, flags, ctx, off::SPIN_EXITS + 4 * slot);
            let here = self.b.ins().icmp_imm_s(IntCC::Equal, e, i64::from(pc));
            exit = Some(match exit {
                Some(other) => self.b.ins().bor(other, here),
                None => here,
            });
        }
        let exit = self.b.ins().uextend(I32, exit?);
        Some(self.b.ins().band(ok, exit))
    }

    /// The whole group takes the branch to `target`.
    fn branch_taken(&mut self, target: u32) -> Result<(), JitError> {
        if target <= self.pc {
            self.store_out_const(off::OUT_A, target);
            self.store_out(off::OUT_B, self.mask);
            self.ret_event(Event::Yield);
        } else if !self.in_chunk(target) {
            self.continue_in_other_chunk(target, self.mask);
        } else {
            let blk = self.resume_block(target)?;
            self.b.ins().jump(blk, &[arg(self.mask), arg(self.insts)]);
        }
        Ok(())
    }

    /// `EXIT`: executing lanes join `exited` and leave the group; the rest continue.
    fn translate_exit(&mut self, g: Guard) -> Result<Flow, JitError> {
        if g.is_never() {
            return Ok(Flow::Next(self.mask));
        }
        let exec = self.exec_mask(g)?;
        self.exit_lanes(exec);
        if g.is_always() {
            self.ret_event(Event::Exited);
            return Ok(Flow::Done);
        }
        let rest = self.b.ins().band_not(self.mask, exec);
        let done_blk = self.b.create_block();
        let cont = self.b.create_block();
        self.b.ins().brif(rest, cont, &[], done_blk, &[]);
        self.b.switch_to_block(done_blk);
        self.ret_event(Event::Exited);
        self.b.switch_to_block(cont);
        Ok(Flow::Next(rest))
    }

    /// `BAR.SYNC id`: the group stops and the scheduler resumes it at `pc + 1` once the barrier
    /// releases. A guarded barrier that no lane executes is a no-op; otherwise the whole group
    /// waits (a group cannot be split here without a divergence the scheduler has not seen).
    fn translate_barrier(&mut self, g: Guard, id: u32) -> Result<Flow, JitError> {
        if g.is_never() {
            return Ok(Flow::Next(self.mask));
        }
        if g.is_always() {
            self.barrier_wait(id);
            return Ok(Flow::Done);
        }
        let wait_blk = self.b.create_block();
        let cont = self.b.create_block();
        let exec = self.exec_mask(g)?;
        self.b.ins().brif(exec, wait_blk, &[], cont, &[]);
        self.b.switch_to_block(wait_blk);
        self.barrier_wait(id);
        self.b.switch_to_block(cont);
        Ok(Flow::Next(self.mask))
    }

    fn barrier_wait(&mut self, id: u32) {
        self.store_out_const(off::OUT_A, self.pc);
        self.store_out(off::OUT_B, self.mask);
        self.store_out_const(off::OUT_C, id);
        self.ret_event(Event::Barrier);
    }
}

/// How a kernel is split into functions: long kernels compile as several Cranelift functions
/// ("chunks") of about [`CHUNK_INSTS`] instructions each, because register allocation of one
/// function costs more than linear time in its length (a 16k-instruction function took 4 s,
/// sixteen 1k-instruction ones 16 × 60 ms). Chunks start at resume points; a straight-line run
/// longer than twice the chunk size gets an extra resume point (an entry that nothing but
/// `Continue` uses). Control that leaves a chunk returns `Continue { pc, mask }`, and
/// `JitKernel::run_group` calls the chunk of `pc` at once: the scheduler never sees it.
pub(crate) struct Plan {
    /// [`resume_points`] plus the chunk starts and the ends of peeled regions.
    pub resume: Vec<bool>,
    /// The first instruction of each chunk, increasing, starting with 0.
    pub starts: Vec<usize>,
    /// The fused regions of the whole kernel ([`fusion_regions`]), in order.
    pub regions: Vec<std::ops::Range<usize>>,
    /// `JitOptions::warp_aggregation`: which aggregable atomics (`memory.rs`) take the
    /// warp-aggregated path (and are therefore not fused).
    pub warp_aggregation: crate::jit::Aggregation,
    /// `JitOptions::simd`: vectorised fused regions (`simd/`).
    pub simd: bool,
}

/// Instructions per chunk (see [`Plan`]).
pub(crate) const CHUNK_INSTS: usize = 1024;

impl Plan {
    /// The plan of `kernel` for the chunk size and code-generation choices of `options`.
    pub fn new(kernel: &Kernel, info: &KernelInfo, options: &crate::jit::JitOptions) -> Plan {
        let n = kernel.insts.len();
        let chunk_insts = options.chunk_insts.max(1);
        let (warp_aggregation, simd) = (options.warp_aggregation, options.simd);
        let mut resume = resume_points(kernel, info);
        let mut starts = vec![0];
        for (pc, r) in resume.iter_mut().enumerate().take(n).skip(1) {
            let len = pc - starts[starts.len() - 1];
            if (len >= chunk_insts && *r) || len >= chunk_insts.saturating_mul(2) {
                *r = true;
                starts.push(pc);
            }
        }
        let regions = fusion_regions(&RegionRules {
            kernel,
            info,
            resume: &resume,
            chunk_starts: &starts,
            aggregate: warp_aggregation,
            simd,
        });
        // A peeled region runs through a resume point; both of its copies continue at its end.
        for region in &regions {
            if (region.start + 1..region.end).any(|pc| resume[pc]) {
                resume[region.end] = true;
            }
        }
        Plan {
            resume,
            starts,
            regions,
            warp_aggregation,
            simd,
        }
    }

    /// Whether the chunk of instructions `range` compiles `pc`: one of its instructions, or the
    /// implicit end `n` of a kernel of `n` instructions, which belongs to the last chunk.
    pub fn owns(range: &std::ops::Range<usize>, pc: usize, n: usize) -> bool {
        range.contains(&pc) || (pc == n && range.end == n)
    }

    /// The instructions of chunk `i` of a kernel of `n` instructions.
    pub fn range(&self, i: usize, n: usize) -> std::ops::Range<usize> {
        let end = self.starts.get(i + 1).copied().unwrap_or(n);
        self.starts[i]..end
    }
}

/// The instructions where a group can start: `pc` 0, branch targets, the instruction after a
/// branch or a barrier (fall-through and barrier resumption), reconvergence points, the
/// validator's basic-block starts, and the implicit end `n`. Indexed `0..=n`.
pub(super) fn resume_points(kernel: &Kernel, info: &KernelInfo) -> Vec<bool> {
    let n = kernel.insts.len();
    let mut resume = vec![false; n + 1];
    resume[0] = true;
    resume[n] = true;
    for (pc, inst) in kernel.insts.iter().enumerate() {
        if info.is_join()[pc] || info.block_start()[pc] {
            resume[pc] = true;
        }
        match inst.op.control() {
            Control::Branch { target } => {
                if (target as usize) <= n {
                    resume[target as usize] = true;
                }
                resume[pc + 1] = true;
            }
            Control::UniformBranch { target } => {
                if (target as usize) <= n {
                    resume[target as usize] = true;
                }
                resume[pc + 1] = true;
            }
            // The lanes that do not continue execute the split again.
            Control::Split { .. } => {
                resume[pc] = true;
                resume[pc + 1] = true;
            }
            Control::Barrier | Control::Exit => resume[pc + 1] = true,
            Control::Next => {}
        }
    }
    resume
}

/// How an instruction may take part in a fused region.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Fusion {
    /// Not fusable: it reads other lanes (`VOTE`, `SHFL`, `REDUX`, `MATCH`), has whole-warp
    /// work around its lane loop (fences of ordered accesses, the slow-path conversion and
    /// fused multiply-add calls, CAST.SPIN's bank mask, the broadcast after a write to a
    /// uniform register or predicate), or it ends a basic block.
    No,
    /// Per-lane register work only.
    Alu,
    /// One per-lane memory access (weak or relaxed load or store, or an atomic).
    Memory,
}

fn fusion_of(
    kernel: &Kernel,
    info: &KernelInfo,
    inst: &Inst,
    aggregate: crate::jit::Aggregation,
) -> Fusion {
    let plain = |order: MemOrder| matches!(order, MemOrder::Weak | MemOrder::Relaxed);
    if !warp::UniformWrites::of(kernel, inst).is_empty() {
        // The broadcast writes every lane's slot: not a per-lane step.
        return Fusion::No;
    }
    match &inst.op {
        Op::Mov { .. }
        | Op::ReadSpecial { .. }
        | Op::Unary { .. }
        | Op::Binary { .. }
        | Op::Imad { .. }
        | Op::Shf(_)
        | Op::Select { .. }
        | Op::PredMove(_)
        | Op::IAdd3 { .. }
        | Op::Lea { .. }
        | Op::Lop3 { .. }
        | Op::SetP { .. }
        | Op::PredLogic { .. }
        | Op::Prmt { .. }
        | Op::Bfe { .. }
        | Op::Bfi { .. }
        | Op::PredLut { .. }
        | Op::PackedMinMax { .. }
        // (`BSSY`, `YIELD`, `NOP`: nothing to do, lane by lane or not.)
        | Op::Nop => Fusion::Alu,
        Op::Fma {
            ty, round, halves, ..
        } if !alu::is_slow_fma(*ty, *round, *halves) => Fusion::Alu,
        Op::Convert {
            dst_ty,
            src_ty,
            round,
            ..
        } if !alu::is_slow_convert(*dst_ty, *src_ty, *round) => Fusion::Alu,
        // A surface access calls its resolver per lane and carries masks: never fused.
        Op::Load { access, .. } | Op::Store { access, .. }
            if plain(access.order) && access.addr.surface().is_none() =>
        {
            Fusion::Memory
        }
        // A warp-aggregated atomic reads every lane's address before any lane performs it: a
        // whole-warp step, never lane-major.
        Op::Atomic(a) if memory::aggregated(info.invariant(), a, aggregate).is_some() => Fusion::No,
        // So is a chain on one shared word.
        Op::Atomic(a) if memory::chained(info.invariant(), a) => Fusion::No,
        Op::Atomic(a) if !a.spin && a.performed.is_pt() && a.access.addr.surface().is_none() => {
            Fusion::Memory
        }
        Op::Convert { .. }
        | Op::Vote { .. }
        | Op::Load { .. }
        | Op::Store { .. }
        | Op::Atomic(_)
        | Op::Fence { .. }
        | Op::Barrier { .. }
        | Op::Branch { .. }
        | Op::BranchConverged { .. }
        | Op::WarpSplit { .. }
        | Op::Exit
        | Op::Shfl { .. }
        | Op::Redux { .. }
        | Op::Match { .. }
        | Op::Fma { .. }
        | Op::IsSpace { .. }
        | Op::PackHalves { .. } => Fusion::No,
    }
}

/// Whether `op` accesses memory (a load, a store or an atomic).
pub(super) fn memory_access(op: &Op) -> bool {
    matches!(op, Op::Load { .. } | Op::Store { .. } | Op::Atomic(_))
}

/// How regions are formed ([`fusion_regions`]).
#[derive(Clone, Copy)]
pub(super) struct RegionRules<'a> {
    pub kernel: &'a Kernel,
    pub info: &'a KernelInfo,
    /// [`resume_points`] plus the chunk starts.
    pub resume: &'a [bool],
    /// The first instruction of each chunk.
    pub chunk_starts: &'a [usize],
    pub aggregate: crate::jit::Aggregation,
    pub simd: bool,
}

impl RegionRules<'_> {
    fn fusion(&self, pc: usize) -> Fusion {
        fusion_of(
            self.kernel,
            self.info,
            &self.kernel.insts[pc],
            self.aggregate,
        )
    }

    /// Whether a region whose accesses so far are `held` may take `inst`'s access as well:
    /// when it holds none, or (with SIMD lanes) one, both are plain loads and exactly one of
    /// them is [`simd::preloadable`] (two such loads gain nothing together: each is one load
    /// for the warp alone, and a second per-chunk uniform load costs compile time). Such a
    /// region runs as vector code with the preloadable load before its loop (`simd/memory.rs`,
    /// `preload`); if it cannot, `build_region` splits it.
    ///
    /// Or, in a scalar region, when every lane that can execute `inst` comes after every lane
    /// that can execute each held access ([`lanes_after`]): the region then runs lane-major
    /// with its accesses in instruction-major order.
    fn admits(&self, held: &[&Inst], inst: &Inst) -> bool {
        match held {
            [] => true,
            [one] if preload_pair(self.simd, self.info, one, inst) => true,
            _ => lanes_after(self.kernel, self.info, held, inst),
        }
    }

    /// The end of the region that starts at `start`; it may run through the resume point
    /// `through` (see [`fusion_regions`]).
    fn end(&self, start: usize, through: Option<usize>) -> usize {
        let (kernel, n) = (self.kernel, self.kernel.insts.len());
        let first = &kernel.insts[start];
        let mut end = start + 1;
        if self.fusion(start) == Fusion::No {
            return end;
        }
        let mut held: Vec<&Inst> = Vec::new();
        if self.fusion(start) == Fusion::Memory {
            held.push(first);
        }
        // The guard of a guarded atomic in the region: its counter is taken from the guard
        // after the loop, so no later instruction of the region may write that predicate.
        let atomic_guard = |inst: &Inst| {
            (matches!(inst.op, Op::Atomic(_)) && !inst.guard.pred.is_pt())
                .then_some(inst.guard.pred)
        };
        let mut guards: Vec<Pred> = atomic_guard(first).into_iter().collect();
        while end < n && (!self.resume[end] || through == Some(end)) {
            let inst = &kernel.insts[end];
            let mut writes_guard = false;
            inst.op.for_each_use(|u| {
                if let crate::ir::Use::PredDst(p) = u {
                    writes_guard |= guards.contains(&p);
                }
            });
            if writes_guard {
                break;
            }
            match self.fusion(end) {
                Fusion::No => break,
                Fusion::Memory if !self.admits(&held, inst) => break,
                Fusion::Memory => held.push(inst),
                Fusion::Alu => {}
            }
            guards.extend(atomic_guard(inst));
            end += 1;
        }
        end
    }

    fn vectorisable(&self, region: &std::ops::Range<usize>) -> bool {
        vector_code(self.kernel, self.info, self.aggregate, self.simd, region)
    }
}

/// Whether `region` is vector code (`simd/`): SIMD lanes are on, every instruction but its
/// hoisted invariant writers has a vector translation, and its atomics' lanes may name
/// adjacent words (`simd/adjacent.rs`).
fn vector_code(
    kernel: &Kernel,
    info: &KernelInfo,
    aggregate: crate::jit::Aggregation,
    simd: bool,
    region: &std::ops::Range<usize>,
) -> bool {
    let accesses: Vec<&Inst> = region
        .clone()
        .map(|pc| &kernel.insts[pc])
        .filter(|i| memory_access(&i.op))
        .collect();
    let vector_accesses = match accesses[..] {
        [] | [_] => true,
        [a, b] => preload_pair(simd, info, a, b),
        _ => false,
    };
    simd && vector_accesses
        && region.clone().all(|pc| {
            let inst = &kernel.insts[pc];
            invariant::invariant_writer(kernel, info, aggregate, inst)
                || simd::vectorisable(kernel, inst)
        })
        && simd::adjacent_atomics(&kernel.insts, info, region)
}

/// Two accesses a vector region holds together: plain loads of which exactly one is
/// [`simd::preloadable`] (see [`RegionRules::admits`]).
fn preload_pair(simd: bool, info: &KernelInfo, a: &Inst, b: &Inst) -> bool {
    let load = |i: &Inst| matches!(i.op, Op::Load { .. });
    let early = |i: &Inst| simd::preloadable(info, i);
    simd && load(a) && load(b) && early(a) != early(b)
}

/// Whether every lane that can execute `later` comes after every lane that can execute each of
/// `earlier`, by their guards' lane sets ([`KernelInfo::guard_lanes`]: `PT`, or a predicate
/// the lane index alone decides). A lane-major loop over a region holding these accesses in
/// this order then performs them in instruction-major order: each access's lanes in
/// increasing order, and all of one access's lanes before any of the next one's. A lane that
/// faults at `later` finds exactly what instruction-major order leaves: every lane of the
/// earlier accesses done, and the lanes of `later` below it (vISA's 16- and 32-channel
/// messages split into 8-channel ones, `(M1, 8)` then `(M3, 8)`, are such accesses).
fn lanes_after(kernel: &Kernel, info: &KernelInfo, earlier: &[&Inst], later: &Inst) -> bool {
    let lanes = |i: &Inst| info.guard_lanes(i.guard, kernel.warp_size);
    let Some(after) = lanes(later) else {
        return false;
    };
    earlier.iter().all(|e| match lanes(e) {
        Some(before) => {
            before == 0 || after == 0 || 31 - before.leading_zeros() < after.trailing_zeros()
        }
        None => false,
    })
}

/// Whether the accesses of `region`, in order, are each in lane order after the ones before
/// it ([`lanes_after`]).
fn lane_ordered(kernel: &Kernel, info: &KernelInfo, region: &std::ops::Range<usize>) -> bool {
    let accesses: Vec<&Inst> = region
        .clone()
        .map(|pc| &kernel.insts[pc])
        .filter(|i| memory_access(&i.op))
        .collect();
    (1..accesses.len()).all(|j| lanes_after(kernel, info, &accesses[..j], accesses[j]))
}

/// Splits `0..n` into regions translated together. A region of more than one instruction is a
/// run of fusable instructions (see [`Fusion`]) with no resume point after its first, holding
/// at most one memory access, or two plain loads of which one is preloadable, or accesses in
/// lane order (see [`RegionRules::admits`]); it runs lane-major (each lane runs the whole region, lanes in
/// increasing order) instead of instruction-major. The two orders are indistinguishable:
/// register and predicate work of one lane never reads another lane's registers or predicate
/// bits (predicates are carried through the region loop as masks and each lane updates only
/// its own bit; `VOTE`, `SHFL`, `REDUX` and `MATCH`, which read other lanes, and every
/// instruction that writes a uniform register or predicate, whose broadcast writes other lanes'
/// slots, are not fusable); with a single memory access
/// the accesses happen in the same lane order; and when a lane's access traps, exactly the
/// earlier lanes have performed theirs in both orders (they differ only in registers and
/// predicates, which a trapped launch does not expose). Two loads change no memory, so their
/// order between lanes is any interleaving of the threads, and a fault of the preloaded one
/// hands the group to the interpreter (`Event::Interpret`), which finds the first fault.
/// Accesses in lane order ([`lanes_after`]) happen in instruction-major order in both.
///
/// **Peeled loop heads.** A region that ends at a resume point `r` which its last instruction
/// falls into (typically a loop head: the target of a backward branch) continues through the region
/// that starts at `r` when the two make one valid region. That region is then translated
/// twice: merged, for the group that falls into `r`, and on its own, for groups that enter at
/// `r` (the back edge). The fall-through path runs straight through both, so fusing it is
/// fusing one straight run; `r` must not be a reconvergence point (a group whose stop pc it
/// is must return there) nor a chunk start, both parts must be vector code or both scalar (a
/// merged region is scalar if either is), and the region at `r` must hold no memory access
/// (a second copy of an access's code costs compile time, and a loop head is typically a
/// comparison). The merged region's end becomes a resume point (both copies continue there),
/// which [`Plan::new`] adds.
pub(super) fn fusion_regions(rules: &RegionRules) -> Vec<std::ops::Range<usize>> {
    let n = rules.kernel.insts.len();
    let mut plain = Vec::new();
    let mut pc = 0;
    while pc < n {
        let end = rules.end(pc, None);
        plain.push(pc..end);
        pc = end;
    }
    let mut regions = Vec::with_capacity(plain.len());
    let mut i = 0;
    while i < plain.len() {
        let region = plain[i].clone();
        let r = region.end;
        if let Some(next) = plain.get(i + 1) {
            let peelable = rules.resume[r]
                && !rules.info.is_join()[r]
                && !rules.chunk_starts.contains(&r)
                && !next
                    .clone()
                    .any(|pc| memory_access(&rules.kernel.insts[pc].op))
                && rules.vectorisable(&region) == rules.vectorisable(next);
            if peelable && rules.end(region.start, Some(r)) == next.end {
                // The region at `r` stays as it is: its end is where both copies continue.
                regions.push(region.start..next.end);
                regions.push(next.clone());
                i += 2;
                continue;
            }
        }
        regions.push(region);
        i += 1;
    }
    regions
}

/// Device base of the global arena, as the i64 the generated code subtracts.
const GLOBAL_BASE_I64: i64 = GLOBAL_BASE as i64;
