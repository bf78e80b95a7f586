//! Checking `.expect` lines against the buffers a launch left behind.

use super::buffers::Buffer;
use crate::ir::{CmpOp, Expect, ExpectLhs, ExpectRhs, Scalar};
use std::cmp::Ordering;

mod fast;

/// The verdict on one expectation.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ExpectOutcome {
    /// The expectation as written.
    pub text: String,
    /// Source line of the `.expect` (0 when it came from the command line).
    pub line: u32,
    pub passed: bool,
    /// What was expected, e.g. `== 16384`.
    pub expected: String,
    /// What was found, e.g. `16380`, or `hist[3] = 7` for the first failing element.
    pub actual: String,
}

/// Evaluates `expect` against `buffers`.
pub fn evaluate(expect: &Expect, buffers: &[Buffer]) -> ExpectOutcome {
    let (passed, expected, actual) = match buffers.iter().find(|b| b.name == expect.lhs.buffer()) {
        None => (
            false,
            describe_rhs(expect),
            format!("no buffer named `{}`", expect.lhs.buffer()),
        ),
        Some(buf) => check(expect, buf),
    };
    ExpectOutcome {
        text: expect.text.clone(),
        line: expect.span.line,
        passed,
        expected,
        actual,
    }
}

fn describe_rhs(expect: &Expect) -> String {
    match &expect.rhs {
        ExpectRhs::Scalar(v) => format!("{} {}", cmp_symbol(expect.cmp), v),
        ExpectRhs::List(vs) => {
            let items: Vec<String> = vs.iter().map(|v| v.to_string()).collect();
            format!("{} {{{}}}", cmp_symbol(expect.cmp), items.join(", "))
        }
    }
}

/// The program-file spelling of a comparison.
pub fn cmp_symbol(cmp: CmpOp) -> &'static str {
    match cmp {
        CmpOp::Eq | CmpOp::Equ => "==",
        CmpOp::Ne | CmpOp::Neu => "!=",
        CmpOp::Lt | CmpOp::Ltu => "<",
        CmpOp::Le | CmpOp::Leu => "<=",
        CmpOp::Gt | CmpOp::Gtu => ">",
        CmpOp::Ge | CmpOp::Geu => ">=",
        CmpOp::Num => "num",
        CmpOp::Nan => "nan",
    }
}

fn check(expect: &Expect, buf: &Buffer) -> (bool, String, String) {
    let expected = describe_rhs(expect);
    let name = &buf.name;
    // Elements are read one at a time (a buffer may be larger than any copy of it should be).
    let (start, end) = match &expect.lhs {
        ExpectLhs::Element { index, .. } => (*index, index.saturating_add(1)),
        ExpectLhs::Range { start, end, .. } => (*start, *end),
        ExpectLhs::Whole { .. } => (0, buf.len() as u64),
        ExpectLhs::Sum { .. } => return aggregate(expect, expected, sum(buf)),
        ExpectLhs::Min { .. } => return aggregate(expect, expected, extreme(buf, Ordering::Less)),
        ExpectLhs::Max { .. } => {
            return aggregate(expect, expected, extreme(buf, Ordering::Greater))
        }
        ExpectLhs::Count { value, .. } => {
            let n = fast::count_equal(buf, *value).unwrap_or_else(|| count_slow(buf, *value));
            return aggregate(expect, expected, Some(Scalar::Int(n.into())));
        }
    };
    if start > end || end > buf.len() as u64 {
        let what = match &expect.lhs {
            ExpectLhs::Element { index, .. } => format!("index {index}"),
            _ => format!("range {start}..{end}"),
        };
        let msg = format!("{what} is outside `{name}` ({} elements)", buf.len());
        return (false, expected, msg);
    }
    let elems = || (start..end).map(|i| (i, buf.get(i as usize).expect("checked range")));
    let count = end - start;
    match &expect.rhs {
        ExpectRhs::Scalar(want) => {
            let range = start as usize..end as usize;
            let failing = fast::first_failing_scalar(buf, range.clone(), expect.cmp, *want)
                .unwrap_or_else(|| buf.scan(range, |_, got| holds(expect.cmp, got, *want)));
            if let Some(i) = failing {
                let got = buf.get(i).expect("checked range");
                return (false, expected, format!("{name}[{i}] = {got}"));
            }
            let actual = match count {
                1 => elems()
                    .next()
                    .map(|(_, one)| one.to_string())
                    .unwrap_or_default(),
                n => format!("all {n} elements"),
            };
            (true, expected, actual)
        }
        ExpectRhs::List(want) => {
            if want.len() as u64 != count {
                return (
                    false,
                    expected,
                    format!("{count} elements, the list has {}", want.len()),
                );
            }
            let first_diff = buf.scan(start as usize..end as usize, |i, g| {
                compare(g, want[i - start as usize]) == Some(Ordering::Equal)
            });
            let passed = match expect.cmp {
                CmpOp::Eq => first_diff.is_none(),
                CmpOp::Ne => first_diff.is_some(),
                _ => false,
            };
            let actual = match first_diff {
                Some(i) => {
                    let g = buf.get(i).expect("checked range");
                    let w = want[i - start as usize];
                    format!("{name}[{i}] = {g} (list has {w})")
                }
                None => "equal".to_string(),
            };
            (passed, expected, actual)
        }
    }
}

fn aggregate(expect: &Expect, expected: String, value: Option<Scalar>) -> (bool, String, String) {
    match (value, &expect.rhs) {
        (None, _) => (false, expected, "the buffer is empty".into()),
        (Some(v), ExpectRhs::Scalar(want)) => {
            (holds(expect.cmp, v, *want), expected, v.to_string())
        }
        (Some(v), ExpectRhs::List(_)) => (
            false,
            expected,
            format!("{v} (a list needs a buffer or range)"),
        ),
    }
}

fn count_slow(buf: &Buffer, value: Scalar) -> u64 {
    let mut n = 0u64;
    buf.scan(0..buf.len(), |_, v| {
        n += u64::from(compare(v, value) == Some(Ordering::Equal));
        true
    });
    n
}

fn sum(buf: &Buffer) -> Option<Scalar> {
    if let Some(total) = fast::sum(buf) {
        return Some(total);
    }
    sum_slow(buf)
}

fn sum_slow(buf: &Buffer) -> Option<Scalar> {
    if buf.elem.is_float() {
        let mut total = 0.0;
        buf.scan(0..buf.len(), |_, v| {
            total += as_f64(v);
            true
        });
        Some(Scalar::Float(total))
    } else {
        // 128-bit integer sum: exact for any buffer that fits in memory.
        let mut total = 0i128;
        buf.scan(0..buf.len(), |_, v| {
            total += as_i128(v).unwrap_or(0);
            true
        });
        Some(Scalar::Int(total))
    }
}

fn extreme(buf: &Buffer, want: Ordering) -> Option<Scalar> {
    fast::extreme(buf, want).unwrap_or_else(|| extreme_slow(buf, want))
}

fn extreme_slow(buf: &Buffer, want: Ordering) -> Option<Scalar> {
    let mut best: Option<Scalar> = None;
    buf.scan(0..buf.len(), |_, v| {
        if best.is_none_or(|b| compare(v, b) == Some(want)) {
            best = Some(v);
        }
        true
    });
    best
}

fn as_f64(v: Scalar) -> f64 {
    match v {
        Scalar::Int(i) => i as f64,
        Scalar::Float(f) => f,
    }
}

fn as_i128(v: Scalar) -> Option<i128> {
    match v {
        Scalar::Int(i) => Some(i),
        Scalar::Float(_) => None,
    }
}

/// Orders two scalars: integers exactly, anything with a float as f64. Two NaNs compare equal
/// (so `== nan` can be expected); a NaN against a number is unordered.
fn compare(a: Scalar, b: Scalar) -> Option<Ordering> {
    match (a, b) {
        (Scalar::Int(x), Scalar::Int(y)) => Some(x.cmp(&y)),
        _ => {
            let (x, y) = (as_f64(a), as_f64(b));
            if x.is_nan() && y.is_nan() {
                Some(Ordering::Equal)
            } else {
                x.partial_cmp(&y)
            }
        }
    }
}

fn holds(cmp: CmpOp, a: Scalar, b: Scalar) -> bool {
    let ord = compare(a, b);
    match cmp {
        CmpOp::Eq | CmpOp::Equ => ord == Some(Ordering::Equal),
        CmpOp::Ne | CmpOp::Neu => ord != Some(Ordering::Equal),
        CmpOp::Lt | CmpOp::Ltu => ord == Some(Ordering::Less),
        CmpOp::Le | CmpOp::Leu => matches!(ord, Some(Ordering::Less | Ordering::Equal)),
        CmpOp::Gt | CmpOp::Gtu => ord == Some(Ordering::Greater),
        CmpOp::Ge | CmpOp::Geu => matches!(ord, Some(Ordering::Greater | Ordering::Equal)),
        CmpOp::Num => ord.is_some(),
        CmpOp::Nan => ord.is_none(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{Span, Ty};

    fn buf(values: &[u32]) -> Buffer {
        Buffer {
            name: "h".into(),
            elem: Ty::U32,
            address: 0,
            bytes: values
                .iter()
                .flat_map(|v| v.to_le_bytes())
                .collect::<Vec<u8>>()
                .into(),
        }
    }

    fn exp(lhs: ExpectLhs, cmp: CmpOp, rhs: ExpectRhs) -> Expect {
        Expect {
            lhs,
            cmp,
            rhs,
            text: String::new(),
            span: Span::default(),
        }
    }

    fn h() -> String {
        "h".to_string()
    }

    #[test]
    fn every_form() {
        let b = [buf(&[3, 1, 4, 1, 5])];
        let int = |v| ExpectRhs::Scalar(Scalar::Int(v));
        let cases = [
            (
                exp(ExpectLhs::Sum { buffer: h() }, CmpOp::Eq, int(14)),
                true,
            ),
            (
                exp(ExpectLhs::Sum { buffer: h() }, CmpOp::Eq, int(15)),
                false,
            ),
            (exp(ExpectLhs::Min { buffer: h() }, CmpOp::Eq, int(1)), true),
            (exp(ExpectLhs::Max { buffer: h() }, CmpOp::Ge, int(5)), true),
            (
                exp(
                    ExpectLhs::Count {
                        buffer: h(),
                        value: Scalar::Int(1),
                    },
                    CmpOp::Eq,
                    int(2),
                ),
                true,
            ),
            (
                exp(
                    ExpectLhs::Element {
                        buffer: h(),
                        index: 2,
                    },
                    CmpOp::Eq,
                    int(4),
                ),
                true,
            ),
            (
                exp(
                    ExpectLhs::Element {
                        buffer: h(),
                        index: 2,
                    },
                    CmpOp::Lt,
                    int(4),
                ),
                false,
            ),
            (
                exp(
                    ExpectLhs::Element {
                        buffer: h(),
                        index: 9,
                    },
                    CmpOp::Eq,
                    int(4),
                ),
                false,
            ),
            (
                exp(
                    ExpectLhs::Range {
                        buffer: h(),
                        start: 1,
                        end: 4,
                    },
                    CmpOp::Le,
                    int(4),
                ),
                true,
            ),
            (
                exp(
                    ExpectLhs::Range {
                        buffer: h(),
                        start: 0,
                        end: 5,
                    },
                    CmpOp::Le,
                    int(4),
                ),
                false,
            ),
            (
                exp(ExpectLhs::Whole { buffer: h() }, CmpOp::Ne, int(0)),
                true,
            ),
            (
                exp(
                    ExpectLhs::Whole { buffer: h() },
                    CmpOp::Eq,
                    ExpectRhs::List([3, 1, 4, 1, 5].map(Scalar::Int).to_vec()),
                ),
                true,
            ),
            (
                exp(
                    ExpectLhs::Whole { buffer: h() },
                    CmpOp::Eq,
                    ExpectRhs::List([3, 1].map(Scalar::Int).to_vec()),
                ),
                false,
            ),
            (
                exp(
                    ExpectLhs::Sum {
                        buffer: "nope".into(),
                    },
                    CmpOp::Eq,
                    int(0),
                ),
                false,
            ),
        ];
        for (e, want) in cases {
            let out = evaluate(&e, &b);
            assert_eq!(out.passed, want, "{e:?} -> {out:?}");
        }
    }

    #[test]
    fn failing_element_is_named() {
        let b = [buf(&[0, 0, 7])];
        let out = evaluate(
            &exp(
                ExpectLhs::Whole { buffer: h() },
                CmpOp::Eq,
                ExpectRhs::Scalar(Scalar::Int(0)),
            ),
            &b,
        );
        assert!(!out.passed);
        assert_eq!(out.actual, "h[2] = 7");
    }

    #[test]
    fn sums_do_not_overflow() {
        let b = [buf(&[u32::MAX, u32::MAX])];
        let out = evaluate(
            &exp(
                ExpectLhs::Sum { buffer: h() },
                CmpOp::Eq,
                ExpectRhs::Scalar(Scalar::Int(2 * u32::MAX as i128)),
            ),
            &b,
        );
        assert!(out.passed, "{out:?}");
    }
}
