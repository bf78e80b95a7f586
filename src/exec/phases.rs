//! A CTA's **barrier phases**, as one backend call ([`WarpRunner::run_phases`]).
//!
//! While every unfinished warp of a CTA runs *light* (one group of all its live lanes, nothing
//! diverged; see `scheduler/divergence.rs`) and no barrier has arrivals, a round of the CTA is a
//! *phase*: each warp's group runs, in index order, until it exits or arrives at a barrier; after
//! the last warp, the barrier releases if every arrival was at one id, and the next phase
//! begins. The scheduler hands such a CTA's warps to the backend as a table (each warp's state
//! and its [`PhaseGroup`]), and [`run_phases_with`] runs the phases over it: the backend
//! supplies only how to run one group, so the per-warp work of a phase is a direct call of the
//! backend's code and a few field writes, with no scheduler bookkeeping between warps.
//!
//! Why a phase is exactly a general round of the scheduler (call for call, counter for
//! counter), which `scheduler/cta.rs` relies on:
//!
//! - The events are taken in the same order with the same effect on each warp: an exit marks
//!   the group's lanes exited; an arrival with some of the group's lanes keeps those lanes,
//!   waiting at the barrier, and retires the others (they exited on the way), as a light warp's
//!   arrival does.
//! - The general round checks for a release after every arrival or exit, but none can succeed
//!   before the phase's last event: a barrier needs every live lane, and every warp not yet run
//!   has live lanes that have not arrived.
//! - After the last event every live lane waits at a barrier, so a barrier releases exactly when
//!   all arrivals were at one id; released groups resume after their barrier instruction.
//! - Any other event (a yield, a divergence, a trap, an arrival at a barrier the group does not
//!   take part in) is not taken: the loop stops and returns it, with the warp's group as it was
//!   before the call, for the scheduler's general path to apply.

use super::{GroupExit, WarpState};

/// Where one warp of a CTA's barrier phases stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PhaseGroup {
    /// The pc the group runs from, or (waiting) the barrier instruction it arrived at.
    pub pc: u32,
    /// The group's lanes; 0: the warp has finished.
    pub mask: u32,
    /// `Some(id)`: the group waits at barrier `id`; `None`: it can run.
    pub barrier: Option<u32>,
}

impl PhaseGroup {
    /// A warp with no lanes left.
    pub const FINISHED: PhaseGroup = PhaseGroup {
        pc: 0,
        mask: 0,
        barrier: None,
    };
}

/// How a call of [`run_phases_with`] ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PhasesEnd {
    /// Whole phases ran: every warp that ran exited or arrived at a barrier, and after the last
    /// phase either a barrier did not release (arrivals at two ids), or every warp finished, or
    /// the limit was met.
    Ran,
    /// Warp `warp`'s event `exit` was not taken (its group is as it was before it ran): the
    /// warps before it exited or arrived in this phase, or had finished, after `ran` whole
    /// phases.
    Stopped {
        warp: usize,
        exit: GroupExit,
        ran: u32,
    },
}

/// What [`run_phases_with`] did besides its end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PhasesRun {
    pub end: PhasesEnd,
    /// Barrier releases (one per whole phase followed by a release).
    pub releases: u32,
    /// Some lanes exited (the CTA's count of live lanes is stale).
    pub retired: bool,
}

/// Runs up to `limit` barrier phases over the table `(states, groups)` (warp `i`'s state and
/// group), calling `run(state, pc, mask)` for each runnable group in index order; `run` must
/// behave as [`WarpRunner::run_group_prepared`](super::WarpRunner::run_group_prepared) with no
/// stop pc. Every group must be runnable or finished, and at least one runnable (the
/// scheduler's condition for phases). See the module docs for why this is a general round.
#[inline(always)]
pub fn run_phases_with<F>(
    states: &mut [Option<&mut WarpState>],
    groups: &mut [PhaseGroup],
    limit: u32,
    mut run: F,
) -> PhasesRun
where
    F: FnMut(&mut WarpState, u32, u32) -> GroupExit,
{
    let mut done = PhasesRun {
        end: PhasesEnd::Ran,
        releases: 0,
        retired: false,
    };
    for phase in 1..=limit {
        // The barrier every arrival of the phase so far was at; `mixed`: arrivals at two.
        let (mut at, mut mixed) = (None, false);
        for (i, (state, group)) in states.iter_mut().zip(groups.iter_mut()).enumerate() {
            if group.mask == 0 {
                continue;
            }
            let state = state
                .as_deref_mut()
                .expect("a phase table holds every warp");
            match run(state, group.pc, group.mask) {
                GroupExit::Exited => {
                    state.exited |= group.mask;
                    *group = PhaseGroup::FINISHED;
                    done.retired = true;
                }
                GroupExit::Barrier { pc, mask, id } if mask & group.mask != 0 => {
                    let kept = mask & group.mask;
                    state.exited |= group.mask & !kept;
                    done.retired |= kept != group.mask;
                    *group = PhaseGroup {
                        pc,
                        mask: kept,
                        barrier: Some(id),
                    };
                    mixed |= at.is_some_and(|first| first != id);
                    at = Some(id);
                }
                exit => {
                    done.end = PhasesEnd::Stopped {
                        warp: i,
                        exit,
                        ran: phase - 1,
                    };
                    return done;
                }
            }
        }
        match at {
            // Every warp exited.
            None => break,
            Some(_) if mixed => break,
            Some(id) => {
                done.releases += 1;
                for group in groups.iter_mut() {
                    if group.mask != 0 && group.barrier == Some(id) {
                        group.barrier = None;
                        group.pc = group.pc.wrapping_add(1);
                    }
                }
            }
        }
    }
    done
}
