//! The reference interpreter: per lane, under the active mask, a plain `match` per instruction.
//! It is the oracle of differential tests, so clarity beats speed. (Being written: issue 2.)
