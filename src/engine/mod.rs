//! The embedding API. (Being written: issue 2.)
