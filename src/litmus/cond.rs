//! Final-state conditions: `out[0] == 1 && (out[1] != 0 || x == 2)`.
//!
//! Grammar (`&&` binds tighter than `||`):
//!
//! ```text
//! cond  := and ( "||" and )*
//! and   := atom ( "&&" atom )*
//! atom  := "(" cond ")" | loc ( "==" | "!=" ) value
//! loc   := NAME ( "[" INDEX "]" )?          // NAME alone is NAME[0]
//! value := "-"? DECIMAL | "0x" HEX
//! ```
//!
//! Anything else (`<`, `!`, `=`, `&`, ...) is an error that says what is accepted.
//!
//! A chain `a && b && c ...` (or `||`) is one node with a list of operands, built by a loop, so
//! a chain of any length costs no stack; only parentheses nest, at most [`MAX_NESTING`] deep
//! (deeper is a parse error). Every walk over a parsed condition (evaluation, printing,
//! [`Cond::locations`], `Drop`) therefore recurses at most about `2 * MAX_NESTING` levels.

use super::Location;

/// How deep parentheses may nest in a condition. Real conditions use two or three levels; the
/// limit keeps the recursive-descent parser and every walk over the tree off the end of the
/// stack, whatever the input.
pub const MAX_NESTING: usize = 64;

/// A condition over buffer elements.
///
/// Parsed conditions have at least two operands in every `And` and `Or` and nest at most
/// [`MAX_NESTING`] parentheses deep. Walks recurse once per level of nesting, so a condition
/// built by hand should stay about as shallow.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cond {
    /// `loc == value` (`equal`) or `loc != value`.
    Compare {
        loc: Location,
        equal: bool,
        value: i128,
    },
    /// Every operand holds (`a && b && ...`). An empty list is true.
    And(Vec<Cond>),
    /// Some operand holds (`a || b || ...`). An empty list is false.
    Or(Vec<Cond>),
}

impl Cond {
    /// Evaluates the condition with `value(loc)` giving each location's value.
    pub fn eval(&self, value: &dyn Fn(&Location) -> i128) -> bool {
        match self {
            Cond::Compare {
                loc,
                equal,
                value: v,
            } => (value(loc) == *v) == *equal,
            Cond::And(operands) => operands.iter().all(|c| c.eval(value)),
            Cond::Or(operands) => operands.iter().any(|c| c.eval(value)),
        }
    }

    /// Every location the condition reads, in order of appearance (without recursion).
    pub fn locations(&self) -> Vec<&Location> {
        let mut out = Vec::new();
        // The operand lists being walked, innermost last, each at its next operand.
        let mut stack: Vec<std::slice::Iter<'_, Cond>> = vec![std::slice::from_ref(self).iter()];
        while let Some(top) = stack.last_mut() {
            match top.next() {
                None => {
                    stack.pop();
                }
                Some(Cond::Compare { loc, .. }) => out.push(loc),
                Some(Cond::And(operands) | Cond::Or(operands)) => stack.push(operands.iter()),
            }
        }
        out
    }
}

impl std::fmt::Display for Cond {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (operands, op, in_and) = match self {
            Cond::Compare { loc, equal, value } => {
                return write!(f, "{loc} {} {value}", if *equal { "==" } else { "!=" });
            }
            Cond::And(operands) => (operands, " && ", true),
            Cond::Or(operands) => (operands, " || ", false),
        };
        if operands.is_empty() {
            // Only a hand-built condition: the parser never makes an empty list.
            return write!(f, "{}", if in_and { "(true)" } else { "(false)" });
        }
        for (i, c) in operands.iter().enumerate() {
            if i > 0 {
                f.write_str(op)?;
            }
            fmt_operand(f, c, in_and)?;
        }
        Ok(())
    }
}

/// Writes `c`, in parentheses if it is an `||` inside an `&&` (needed), an `&&` inside an `||`
/// (for the reader), or a one-operand list (so it does not blend into its parent's list).
fn fmt_operand(f: &mut std::fmt::Formatter<'_>, c: &Cond, in_and: bool) -> std::fmt::Result {
    let wrap = match c {
        Cond::Compare { .. } => false,
        Cond::And(v) => !in_and || v.len() == 1,
        Cond::Or(v) => in_and || v.len() == 1,
    };
    if wrap {
        write!(f, "({c})")
    } else {
        write!(f, "{c}")
    }
}

/// A condition or location syntax error: a message and the byte offset in the parsed text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CondError {
    pub offset: usize,
    pub message: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Tok {
    Name(String),
    Int(i128),
    LBracket,
    RBracket,
    LParen,
    RParen,
    Eq,
    Ne,
    And,
    Or,
    Minus,
    End,
}

fn describe(t: &Tok) -> String {
    match t {
        Tok::Name(n) => format!("`{n}`"),
        Tok::Int(v) => format!("`{v}`"),
        Tok::LBracket => "`[`".into(),
        Tok::RBracket => "`]`".into(),
        Tok::LParen => "`(`".into(),
        Tok::RParen => "`)`".into(),
        Tok::Eq => "`==`".into(),
        Tok::Ne => "`!=`".into(),
        Tok::And => "`&&`".into(),
        Tok::Or => "`||`".into(),
        Tok::Minus => "`-`".into(),
        Tok::End => "the end of the condition".into(),
    }
}

fn err<T>(offset: usize, message: impl Into<String>) -> Result<T, CondError> {
    Err(CondError {
        offset,
        message: message.into(),
    })
}

fn lex(text: &str) -> Result<Vec<(usize, Tok)>, CondError> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        let two = text.get(i..i + 2).unwrap_or("");
        let start = i;
        let tok = match c {
            b' ' | b'\t' | b'\r' => {
                i += 1;
                continue;
            }
            b'[' => Tok::LBracket,
            b']' => Tok::RBracket,
            b'(' => Tok::LParen,
            b')' => Tok::RParen,
            b'-' => Tok::Minus,
            _ if two == "==" => Tok::Eq,
            _ if two == "!=" => Tok::Ne,
            _ if two == "&&" => Tok::And,
            _ if two == "||" => Tok::Or,
            b'<' | b'>' => {
                let op = if text[i + 1..].starts_with('=') {
                    &text[i..i + 2]
                } else {
                    &text[i..i + 1]
                };
                return err(
                    i,
                    format!("unsupported comparison `{op}`: conditions compare with `==` or `!=`"),
                );
            }
            b'=' => return err(i, "`=` is not a comparison: write `==`"),
            b'!' => {
                return err(
                    i,
                    "unsupported operator `!`: negate a comparison with `!=` instead",
                )
            }
            b'&' => return err(i, "`&` is not an operator here: write `&&`"),
            b'|' => return err(i, "`|` is not an operator here: write `||`"),
            b'0'..=b'9' => {
                let end = text[i..]
                    .find(|ch: char| !ch.is_ascii_alphanumeric() && ch != '_')
                    .map_or(text.len(), |n| i + n);
                let word = &text[i..end];
                let parsed = match word.strip_prefix("0x").or_else(|| word.strip_prefix("0X")) {
                    Some(hex) => i128::from_str_radix(hex, 16),
                    None => word.parse::<i128>(),
                };
                let Ok(v) = parsed else {
                    return err(i, format!("`{word}` is not an integer"));
                };
                if !(i128::from(i64::MIN)..=i128::from(u64::MAX)).contains(&v) {
                    return err(i, format!("`{word}` does not fit in 64 bits"));
                }
                i = end;
                out.push((start, Tok::Int(v)));
                continue;
            }
            _ if c == b'_' || c.is_ascii_alphabetic() => {
                let end = text[i..]
                    .find(|ch: char| !ch.is_ascii_alphanumeric() && ch != '_')
                    .map_or(text.len(), |n| i + n);
                let word = &text[i..end];
                i = end;
                out.push((start, Tok::Name(word.to_string())));
                continue;
            }
            _ => {
                let ch = text[i..].chars().next().unwrap_or('?');
                return err(i, format!("unexpected character `{ch}` in a condition"));
            }
        };
        i += match tok {
            Tok::Eq | Tok::Ne | Tok::And | Tok::Or => 2,
            _ => 1,
        };
        out.push((start, tok));
    }
    out.push((text.len(), Tok::End));
    Ok(out)
}

struct Parser {
    toks: Vec<(usize, Tok)>,
    pos: usize,
    /// Parentheses open around the current position.
    depth: usize,
}

impl Parser {
    fn peek(&self) -> &(usize, Tok) {
        &self.toks[self.pos.min(self.toks.len() - 1)]
    }
    fn next(&mut self) -> (usize, Tok) {
        let t = self.peek().clone();
        self.pos += 1;
        t
    }

    fn or(&mut self) -> Result<Cond, CondError> {
        let first = self.and()?;
        if self.peek().1 != Tok::Or {
            return Ok(first);
        }
        let mut operands = vec![first];
        while self.peek().1 == Tok::Or {
            self.next();
            operands.push(self.and()?);
        }
        Ok(Cond::Or(operands))
    }

    fn and(&mut self) -> Result<Cond, CondError> {
        let first = self.atom()?;
        if self.peek().1 != Tok::And {
            return Ok(first);
        }
        let mut operands = vec![first];
        while self.peek().1 == Tok::And {
            self.next();
            operands.push(self.atom()?);
        }
        Ok(Cond::And(operands))
    }

    fn atom(&mut self) -> Result<Cond, CondError> {
        let (at, tok) = self.next();
        match tok {
            Tok::LParen => {
                if self.depth >= MAX_NESTING {
                    return err(
                        at,
                        format!(
                            "parentheses nested too deep: a condition nests at most \
                             {MAX_NESTING} levels of `(`"
                        ),
                    );
                }
                self.depth += 1;
                let inner = self.or()?;
                self.depth -= 1;
                let (at2, close) = self.next();
                if close != Tok::RParen {
                    return err(
                        at2,
                        format!(
                            "expected `)` to close the `(` at column {}, found {}",
                            at + 1,
                            describe(&close)
                        ),
                    );
                }
                Ok(inner)
            }
            Tok::Name(name) => {
                let loc = self.rest_of_location(at, name)?;
                let (at_op, op) = self.next();
                let equal = match op {
                    Tok::Eq => true,
                    Tok::Ne => false,
                    other => {
                        return err(
                            at_op,
                            format!(
                                "expected `==` or `!=` after `{loc}`, found {}",
                                describe(&other)
                            ),
                        )
                    }
                };
                let value = self.value()?;
                Ok(Cond::Compare { loc, equal, value })
            }
            Tok::End => err(
                at,
                "expected a comparison `NAME[INDEX] == VALUE`, found nothing",
            ),
            other => err(
                at,
                format!(
                    "expected a comparison `NAME[INDEX] == VALUE` or `(`, found {}",
                    describe(&other)
                ),
            ),
        }
    }

    fn rest_of_location(&mut self, at: usize, name: String) -> Result<Location, CondError> {
        if self.peek().1 != Tok::LBracket {
            return Ok(Location {
                buffer: name,
                index: 0,
            });
        }
        self.next();
        let (at_i, index) = self.next();
        let index = match index {
            Tok::Int(v) if v >= 0 => usize::try_from(v)
                .or_else(|_| err(at_i, format!("index {v} of `{name}` is too large")))?,
            other => {
                return err(
                    at_i,
                    format!(
                        "expected an element index in `{name}[...]`, found {}",
                        describe(&other)
                    ),
                )
            }
        };
        let (at_c, close) = self.next();
        if close != Tok::RBracket {
            return err(
                at_c,
                format!(
                    "expected `]` after `{name}[{index}` (opened at column {}), found {}",
                    at + 1,
                    describe(&close)
                ),
            );
        }
        Ok(Location {
            buffer: name,
            index,
        })
    }

    fn value(&mut self) -> Result<i128, CondError> {
        let (at, tok) = self.next();
        match tok {
            Tok::Int(v) => Ok(v),
            Tok::Minus => match self.next() {
                (_, Tok::Int(v)) if v <= i128::from(i64::MAX) + 1 => Ok(-v),
                (at2, Tok::Int(_)) => err(at2, "value does not fit in 64 bits"),
                (at2, other) => err(
                    at2,
                    format!("expected a number after `-`, found {}", describe(&other)),
                ),
            },
            other => err(
                at,
                format!("expected an integer value, found {}", describe(&other)),
            ),
        }
    }
}

/// Parses a whole condition.
pub fn parse_cond(text: &str) -> Result<Cond, CondError> {
    let mut p = Parser {
        toks: lex(text)?,
        pos: 0,
        depth: 0,
    };
    let cond = p.or()?;
    match p.next() {
        (_, Tok::End) => Ok(cond),
        (at, Tok::RParen) => err(at, "unmatched `)`"),
        (at, other) => err(
            at,
            format!(
                "expected `&&`, `||` or the end of the condition, found {}",
                describe(&other)
            ),
        ),
    }
}

/// Parses one location `NAME[INDEX]` (or `NAME`, element 0).
pub fn parse_location(text: &str) -> Result<Location, CondError> {
    let mut p = Parser {
        toks: lex(text)?,
        pos: 0,
        depth: 0,
    };
    let (at, tok) = p.next();
    let Tok::Name(name) = tok else {
        return err(
            at,
            format!(
                "expected a location `NAME[INDEX]`, found {}",
                describe(&tok)
            ),
        );
    };
    let loc = p.rest_of_location(at, name)?;
    match p.next() {
        (_, Tok::End) => Ok(loc),
        (at, other) => err(
            at,
            format!("unexpected {} after the location `{loc}`", describe(&other)),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn loc(b: &str, i: usize) -> Location {
        Location {
            buffer: b.into(),
            index: i,
        }
    }
    fn cmp(b: &str, i: usize, equal: bool, value: i128) -> Cond {
        Cond::Compare {
            loc: loc(b, i),
            equal,
            value,
        }
    }
    fn e(text: &str) -> CondError {
        parse_cond(text).expect_err(text)
    }

    #[test]
    fn and_binds_tighter_than_or() {
        let c = parse_cond("a[0] == 1 || b[1] != 2 && c == 3").unwrap();
        assert_eq!(
            c,
            Cond::Or(vec![
                cmp("a", 0, true, 1),
                Cond::And(vec![cmp("b", 1, false, 2), cmp("c", 0, true, 3)])
            ])
        );
        assert_eq!(c.to_string(), "a[0] == 1 || (b[1] != 2 && c[0] == 3)");
        let c = parse_cond("(a[0] == 1 || b[1] != 2) && c == 3").unwrap();
        assert!(matches!(&c, Cond::And(v) if v.len() == 2));
        assert_eq!(c.to_string(), "(a[0] == 1 || b[1] != 2) && c[0] == 3");
        assert_eq!(
            c.locations(),
            vec![&loc("a", 0), &loc("b", 1), &loc("c", 0)]
        );
    }

    #[test]
    fn chains_are_one_node_each() {
        let c = parse_cond("a == 1 && b == 2 && c == 3 || d == 4 || e == 5").unwrap();
        assert_eq!(
            c,
            Cond::Or(vec![
                Cond::And(vec![
                    cmp("a", 0, true, 1),
                    cmp("b", 0, true, 2),
                    cmp("c", 0, true, 3)
                ]),
                cmp("d", 0, true, 4),
                cmp("e", 0, true, 5),
            ])
        );
        assert_eq!(
            c.to_string(),
            "(a[0] == 1 && b[0] == 2 && c[0] == 3) || d[0] == 4 || e[0] == 5"
        );
        assert_eq!(parse_cond(&c.to_string()).unwrap(), c);
        // Parentheses around a single comparison add no node.
        assert_eq!(parse_cond("((a == 1))").unwrap(), cmp("a", 0, true, 1));
    }

    #[test]
    fn hand_built_degenerate_lists_print_and_evaluate() {
        let never = |_: &Location| -> i128 { unreachable!("no comparison to evaluate") };
        assert!(Cond::And(vec![]).eval(&never));
        assert!(!Cond::Or(vec![]).eval(&never));
        let one = Cond::And(vec![
            Cond::Or(vec![cmp("a", 0, true, 1)]),
            cmp("b", 0, true, 2),
        ]);
        assert_eq!(one.to_string(), "(a[0] == 1) && b[0] == 2");
        assert_eq!(
            Cond::Or(vec![Cond::And(vec![]), cmp("b", 0, true, 2)]).to_string(),
            "((true)) || b[0] == 2"
        );
    }

    /// 100,000 comparisons in one chain: parsing, evaluation, printing, `locations`, `clone`,
    /// `==` and dropping must not use stack in proportion to the length. Run on the test's own
    /// thread (2 MiB of stack under `cargo test`), as a user's thread might.
    #[test]
    fn a_100000_term_chain_parses_and_evaluates_on_a_small_stack() {
        const N: usize = 100_000;
        let text = vec!["out[0] == 1"; N].join(" && ");
        let c = parse_cond(&text).unwrap();
        assert!(matches!(&c, Cond::And(v) if v.len() == N));
        assert!(c.eval(&|_| 1));
        assert!(!c.eval(&|_| 0));
        assert_eq!(c.locations().len(), N);
        assert_eq!(c.to_string().len(), text.len());
        assert_eq!(c.clone(), c);

        // An `||` of 50,000 two-comparison `&&`s.
        let text = (0..N / 2)
            .map(|i| format!("x[0] == {i} && x[1] != {i}"))
            .collect::<Vec<_>>()
            .join(" || ");
        let c = parse_cond(&text).unwrap();
        let Cond::Or(terms) = &c else {
            panic!("expected an `||` chain")
        };
        assert_eq!(terms.len(), N / 2);
        assert!(terms
            .iter()
            .all(|t| matches!(t, Cond::And(v) if v.len() == 2)));
        assert_eq!(c.locations().len(), N);
        assert!(!c.eval(&|_| -1));
        assert!(!c.eval(&|_| 5));
        assert!(c.eval(&|l| if l.index == 0 { 49_999 } else { 0 }));
        assert!(!c.eval(&|l| if l.index == 0 { 50_000 } else { 0 }));
        assert_eq!(parse_cond(&c.to_string()).unwrap(), c);
        drop(c);
    }

    #[test]
    fn nesting_is_limited_with_a_clear_error() {
        let nested = |depth: usize| format!("{}x == 1{}", "(".repeat(depth), ")".repeat(depth));
        assert_eq!(
            parse_cond(&nested(MAX_NESTING)).unwrap(),
            cmp("x", 0, true, 1)
        );
        for depth in [MAX_NESTING + 1, 10_000, 1_000_000] {
            let error = e(&nested(depth));
            assert!(
                error.message.contains("nested too deep")
                    && error
                        .message
                        .contains(&format!("at most {MAX_NESTING} levels")),
                "{error:?}"
            );
            // The first `(` past the limit.
            assert_eq!(error.offset, MAX_NESTING, "{error:?}");
        }
        // Unclosed parentheses past the limit are the same error, not a stack overflow.
        assert_eq!(e(&"(".repeat(100_000)).offset, MAX_NESTING);
        // The limit counts open parentheses, not parentheses in total.
        let siblings = vec!["(x == 1)"; 1000].join(" || ");
        assert!(parse_cond(&siblings).is_ok());

        // MAX_NESTING levels, each with both operators: a tree as deep as parsing allows.
        let mut deep = "x == 0".to_string();
        for i in 0..MAX_NESTING {
            deep = format!("x == {i} || x != 7 && ({deep})");
        }
        let c = parse_cond(&deep).unwrap();
        assert_eq!(c.locations().len(), 1 + 2 * MAX_NESTING);
        assert!(c.eval(&|_| 0));
        assert!(!c.eval(&|_| 7));
        assert!(c.to_string().starts_with(&format!(
            "x[0] == {} || (x[0] != 7 && (x[0] == {} ||",
            MAX_NESTING - 1,
            MAX_NESTING - 2
        )));
        assert_eq!(c.clone(), c);
    }

    #[test]
    fn values_negative_and_hex() {
        assert_eq!(parse_cond("x[2]==-1").unwrap(), cmp("x", 2, true, -1));
        assert_eq!(parse_cond("x != 0x10").unwrap(), cmp("x", 0, false, 16));
        assert_eq!(
            parse_cond("x == 18446744073709551615").unwrap(),
            cmp("x", 0, true, u64::MAX as i128)
        );
        assert_eq!(
            parse_cond("x == -9223372036854775808").unwrap(),
            cmp("x", 0, true, i64::MIN as i128)
        );
    }

    #[test]
    fn evaluation() {
        let c = parse_cond("a == 1 && (b == 0 || b == 2)").unwrap();
        let at = |a: i128, b: i128| c.eval(&|l: &Location| if l.buffer == "a" { a } else { b });
        assert!(at(1, 0) && at(1, 2));
        assert!(!at(1, 1) && !at(0, 0));
    }

    #[test]
    fn every_error_says_what_is_wrong_and_where() {
        let cases: &[(&str, usize, &str)] = &[
            ("", 0, "found nothing"),
            ("x < 1", 2, "unsupported comparison `<`"),
            ("x >= 1", 2, "unsupported comparison `>=`"),
            ("x = 1", 2, "write `==`"),
            ("!(x == 1)", 0, "unsupported operator `!`"),
            ("x == 1 & y == 2", 7, "write `&&`"),
            ("x == 1 | y == 2", 7, "write `||`"),
            ("x == 1 #", 7, "unexpected character `#`"),
            ("x == 1a", 5, "`1a` is not an integer"),
            ("x == 99999999999999999999", 5, "does not fit in 64 bits"),
            ("x == -9223372036854775809", 6, "does not fit in 64 bits"),
            ("x == - y", 7, "expected a number after `-`"),
            ("x == y", 5, "expected an integer value, found `y`"),
            ("x 1", 2, "expected `==` or `!=` after `x[0]`"),
            ("x[a] == 1", 2, "expected an element index"),
            ("x[-1] == 1", 2, "expected an element index"),
            ("x[1 == 1", 4, "expected `]`"),
            ("(x == 1", 7, "expected `)`"),
            ("x == 1)", 6, "unmatched `)`"),
            ("x == 1 y == 2", 7, "expected `&&`, `||` or the end"),
            ("x == 1 &&", 9, "found nothing"),
            ("== 1", 0, "found `==`"),
        ];
        for &(text, offset, needle) in cases {
            let error = e(text);
            assert!(
                error.message.contains(needle),
                "{text:?}: {:?} lacks {needle:?}",
                error.message
            );
            assert_eq!(error.offset, offset, "{text:?}: {error:?}");
        }
    }

    #[test]
    fn locations() {
        assert_eq!(parse_location("out[3]").unwrap(), loc("out", 3));
        assert_eq!(parse_location("flag").unwrap(), loc("flag", 0));
        assert!(parse_location("3")
            .unwrap_err()
            .message
            .contains("expected a location"));
        assert!(parse_location("out[1] x")
            .unwrap_err()
            .message
            .contains("after the location `out[1]`"));
    }
}
