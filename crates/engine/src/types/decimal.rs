//! # Exact fixed-point DECIMAL
//!
//! MySQL's `DECIMAL(M,D)` holds up to 65 significant digits (`M`), of which
//! up to 30 are fractional (`D`). That is more than an `i128` can carry
//! (≈ 38 digits), so [`Decimal`] keeps its magnitude as a plain vector of
//! decimal digits (most significant first, no leading zeros) plus a sign and
//! a *scale* (how many of the trailing digits are fractional):
//!
//! ```text
//!   -12.340   ⇒  negative = true, digits = [1,2,3,4,0], scale = 3
//!   0.005     ⇒  negative = false, digits = [5],        scale = 3
//!   0         ⇒  negative = false, digits = [],         scale = any
//! ```
//!
//! Digit vectors are slow next to base-10⁹ limbs, but every operation here
//! is short schoolbook arithmetic on at most ~130 digits, and correctness is
//! obvious. Speed can come later behind the same API.
//!
//! ## MySQL rules followed
//!
//! * **Rounding** is ROUND_HALF_UP on the magnitude ("half away from zero"),
//!   as `decimal_round(..., HALF_UP)` does when a value is stored into a
//!   column with fewer fractional digits: `1.005 → 1.01`, `-1.005 → -1.01`.
//! * **Parsing** follows `string2decimal`: optional leading whitespace, an
//!   optional sign, digits with an optional point (`"1."`, `".5"` are
//!   numbers), and an optional exponent (`"1.5e3"` = 1500). Anything after
//!   the number is left to the caller ([`Decimal::parse_prefix`] reports how
//!   much was consumed).
//! * **Equality ignores scale**: `1.0 == 1.00`, and [`Hash`] agrees.
//! * **Arithmetic limits**: results carry at most [`MAX_PRECISION`] digits.
//!   `+`/`-` keep the larger scale; `*` keeps `s1 + s2` fractional digits,
//!   capped at [`MAX_SCALE`]; `/` keeps `s1 + div_precision_increment`
//!   (default [`DIV_PRECISION_INCREMENT`] = 4), capped at 30. When the
//!   integer part plus the scale would exceed 65 digits, fractional digits
//!   are rounded away first; an integer part over 65 digits is an overflow.
//!
//! MySQL's `decimal_div` computes in 9-digit words and *cuts* the quotient
//! after whole words; expressions compute on that quotient and round only
//! the final value ([`Decimal::checked_div_mysql`]). [`Decimal::checked_div`]
//! is the rounded form a stored or shown `/` result has.

use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::str::FromStr;

/// Largest `M` in `DECIMAL(M,D)` (MySQL `DECIMAL_MAX_PRECISION`).
pub const MAX_PRECISION: u8 = 65;
/// Largest `D` in `DECIMAL(M,D)` (MySQL `DECIMAL_MAX_SCALE`).
pub const MAX_SCALE: u8 = 30;
/// MySQL's default `div_precision_increment`.
pub const DIV_PRECISION_INCREMENT: u8 = 4;
/// Digits MySQL's string→decimal conversion can hold (9 words of 9 digits);
/// a text with more significant digits is an "Incorrect decimal value".
pub const MAX_PARSE_DIGITS: usize = 81;

/// Integer digits beyond which parsing stops with [`DecimalError::Overflow`]
/// (guards against `"1e999999999"` allocating gigabytes).
const PARSE_INT_DIGIT_LIMIT: i64 = 200;
/// Fractional digits kept by the parser; further digits are dropped and
/// reported through [`ParsedDecimal::lost_digits`].
const PARSE_SCALE_LIMIT: i64 = 160;

/// Why a decimal operation failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DecimalError {
    /// The text has no digits where a number should start.
    BadNumber,
    /// The result has more integer digits than allowed.
    Overflow,
    /// Division by zero (SQL gives NULL with warning 1365).
    DivisionByZero,
}

impl fmt::Display for DecimalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            DecimalError::BadNumber => "not a number",
            DecimalError::Overflow => "decimal overflow",
            DecimalError::DivisionByZero => "division by zero",
        })
    }
}

impl std::error::Error for DecimalError {}

/// An exact decimal number: `(-1)^negative × digits × 10^-scale`.
#[derive(Clone, Debug)]
pub struct Decimal {
    /// Never true for zero.
    negative: bool,
    /// Magnitude digits 0..=9, most significant first, no leading zeros.
    digits: Vec<u8>,
    /// Number of trailing digits of `digits` after the decimal point
    /// (may exceed `digits.len()`: 0.005 is digits `[5]`, scale 3).
    scale: u8,
}

/// Result of [`Decimal::parse_prefix`].
#[derive(Clone, Debug)]
pub struct ParsedDecimal {
    pub value: Decimal,
    /// Bytes of the input that form the number (leading whitespace included).
    pub consumed: usize,
    /// Fractional digits beyond an internal limit of 160 were dropped.
    pub lost_digits: bool,
}

// ---------------------------------------------------------------------------
// Magnitude helpers: digit vectors, most significant first.

fn strip_leading_zeros(mut d: Vec<u8>) -> Vec<u8> {
    let nz = d.iter().position(|&x| x != 0).unwrap_or(d.len());
    d.drain(..nz);
    d
}

/// Compares two normalized magnitudes (no leading zeros).
fn cmp_mag(a: &[u8], b: &[u8]) -> Ordering {
    a.len().cmp(&b.len()).then_with(|| a.cmp(b))
}

fn add_mag(a: &[u8], b: &[u8]) -> Vec<u8> {
    let n = a.len().max(b.len()) + 1;
    let mut out = vec![0u8; n];
    let mut carry = 0u8;
    for i in 0..n {
        let x = if i < a.len() { a[a.len() - 1 - i] } else { 0 };
        let y = if i < b.len() { b[b.len() - 1 - i] } else { 0 };
        let s = x + y + carry;
        out[n - 1 - i] = s % 10;
        carry = s / 10;
    }
    strip_leading_zeros(out)
}

/// `a - b` for normalized magnitudes with `a >= b`.
fn sub_mag(a: &[u8], b: &[u8]) -> Vec<u8> {
    debug_assert!(cmp_mag(a, b) != Ordering::Less);
    let mut out = a.to_vec();
    let mut borrow = 0i8;
    for i in 0..a.len() {
        let idx = a.len() - 1 - i;
        let y = if i < b.len() {
            b[b.len() - 1 - i] as i8
        } else {
            0
        };
        let mut v = a[idx] as i8 - y - borrow;
        if v < 0 {
            v += 10;
            borrow = 1;
        } else {
            borrow = 0;
        }
        out[idx] = v as u8;
    }
    strip_leading_zeros(out)
}

fn mul_mag(a: &[u8], b: &[u8]) -> Vec<u8> {
    if a.is_empty() || b.is_empty() {
        return Vec::new();
    }
    let mut acc = vec![0u32; a.len() + b.len()];
    for (i, &x) in a.iter().enumerate() {
        for (j, &y) in b.iter().enumerate() {
            acc[i + j + 1] += u32::from(x) * u32::from(y);
        }
    }
    let mut carry = 0u32;
    for slot in acc.iter_mut().rev() {
        let v = *slot + carry;
        *slot = v % 10;
        carry = v / 10;
    }
    debug_assert_eq!(carry, 0);
    strip_leading_zeros(acc.into_iter().map(|v| v as u8).collect())
}

/// Long division of normalized magnitudes; `b` must be non-zero.
fn divmod_mag(a: &[u8], b: &[u8]) -> (Vec<u8>, Vec<u8>) {
    debug_assert!(!b.is_empty());
    let mut quotient = Vec::with_capacity(a.len());
    let mut rem: Vec<u8> = Vec::new();
    for &d in a {
        rem.push(d);
        rem = strip_leading_zeros(rem);
        let mut q = 0u8;
        while cmp_mag(&rem, b) != Ordering::Less {
            rem = sub_mag(&rem, b);
            q += 1;
        }
        quotient.push(q);
    }
    (strip_leading_zeros(quotient), rem)
}

/// Adds one unit in the last place.
fn increment_mag(d: &mut Vec<u8>) {
    for x in d.iter_mut().rev() {
        if *x == 9 {
            *x = 0;
        } else {
            *x += 1;
            return;
        }
    }
    d.insert(0, 1);
}

fn push_zeros(d: &mut Vec<u8>, n: usize) {
    if !d.is_empty() {
        d.resize(d.len() + n, 0);
    }
}

// ---------------------------------------------------------------------------

impl Decimal {
    /// Zero with scale 0.
    pub fn zero() -> Decimal {
        Decimal {
            negative: false,
            digits: Vec::new(),
            scale: 0,
        }
    }

    /// Builds a value from raw parts, normalizing leading zeros and the
    /// sign of zero.
    fn from_parts(negative: bool, digits: Vec<u8>, scale: u8) -> Decimal {
        let digits = strip_leading_zeros(digits);
        Decimal {
            negative: negative && !digits.is_empty(),
            digits,
            scale,
        }
    }

    /// Builds `mantissa × 10^-scale`, e.g. `from_mantissa(-1234, 2)` = -12.34.
    pub fn from_mantissa(mantissa: i128, scale: u8) -> Decimal {
        let negative = mantissa < 0;
        let digits = mantissa
            .unsigned_abs()
            .to_string()
            .bytes()
            .map(|b| b - b'0')
            .collect();
        Decimal::from_parts(negative, digits, scale)
    }

    pub fn from_i64(v: i64) -> Decimal {
        Decimal::from_mantissa(i128::from(v), 0)
    }

    pub fn from_u64(v: u64) -> Decimal {
        Decimal::from_mantissa(i128::from(v), 0)
    }

    /// The shortest decimal that reads back as `v` (MySQL `double2decimal`
    /// also goes through the shortest round-trip representation).
    /// `None` for NaN and infinities.
    pub fn from_f64(v: f64) -> Option<Decimal> {
        if !v.is_finite() {
            return None;
        }
        // `{:e}` prints the shortest round-trip digits, e.g. "1.2345e-7".
        let text = format!("{v:e}");
        Decimal::parse_prefix(text.as_bytes()).ok().map(|p| p.value)
    }

    /// Parses a number at the start of `input` (see the module docs for
    /// the grammar). Fails with [`DecimalError::BadNumber`] when no digit
    /// starts the text and [`DecimalError::Overflow`] when the exponent
    /// makes the integer part absurdly long (> 200 digits).
    pub fn parse_prefix(input: &[u8]) -> Result<ParsedDecimal, DecimalError> {
        let mut i = 0;
        while i < input.len() && input[i].is_ascii_whitespace() {
            i += 1;
        }
        let mut negative = false;
        if i < input.len() && (input[i] == b'-' || input[i] == b'+') {
            negative = input[i] == b'-';
            i += 1;
        }
        let int_start = i;
        while i < input.len() && input[i].is_ascii_digit() {
            i += 1;
        }
        let int_part = &input[int_start..i];
        let mut frac_part: &[u8] = &[];
        if i < input.len() && input[i] == b'.' {
            let frac_start = i + 1;
            let mut j = frac_start;
            while j < input.len() && input[j].is_ascii_digit() {
                j += 1;
            }
            if !int_part.is_empty() || j > frac_start {
                frac_part = &input[frac_start..j];
                i = j;
            }
        }
        if int_part.is_empty() && frac_part.is_empty() {
            return Err(DecimalError::BadNumber);
        }
        let mut exponent: i64 = 0;
        if i < input.len() && (input[i] == b'e' || input[i] == b'E') {
            let mut j = i + 1;
            let mut exp_negative = false;
            if j < input.len() && (input[j] == b'-' || input[j] == b'+') {
                exp_negative = input[j] == b'-';
                j += 1;
            }
            let exp_start = j;
            let mut e: i64 = 0;
            while j < input.len() && input[j].is_ascii_digit() {
                e = e
                    .saturating_mul(10)
                    .saturating_add(i64::from(input[j] - b'0'));
                j += 1;
            }
            if j > exp_start {
                // Beyond +-10000 a 65-digit decimal has overflowed or is
                // zero anyway; clamping keeps the scale arithmetic below
                // from overflowing (found by fuzzing: "1e9223372036854775807").
                let e = e.min(10_000);
                exponent = if exp_negative { -e } else { e };
                i = j;
            }
        }
        let consumed = i;

        let mut digits: Vec<u8> = int_part
            .iter()
            .chain(frac_part.iter())
            .map(|b| b - b'0')
            .collect();
        digits = strip_leading_zeros(digits);
        let mut scale = frac_part.len() as i64 - exponent;
        let mut lost_digits = false;
        if digits.is_empty() {
            // Zero: keep a sensible scale, never an error.
            scale = scale.clamp(0, PARSE_SCALE_LIMIT);
        } else {
            if digits.len() as i64 - scale > PARSE_INT_DIGIT_LIMIT {
                return Err(DecimalError::Overflow);
            }
            if scale < 0 {
                push_zeros(&mut digits, (-scale) as usize);
                scale = 0;
            } else if scale > PARSE_SCALE_LIMIT {
                let drop = (scale - PARSE_SCALE_LIMIT) as usize;
                let keep = digits.len().saturating_sub(drop);
                lost_digits = digits[keep..].iter().any(|&d| d != 0);
                digits.truncate(keep);
                digits = strip_leading_zeros(digits);
                scale = PARSE_SCALE_LIMIT;
            }
        }
        Ok(ParsedDecimal {
            value: Decimal::from_parts(negative, digits, scale as u8),
            consumed,
            lost_digits,
        })
    }

    /// Number of fractional digits carried.
    pub fn scale(&self) -> u8 {
        self.scale
    }

    pub fn is_zero(&self) -> bool {
        self.digits.is_empty()
    }

    pub fn is_negative(&self) -> bool {
        self.negative
    }

    /// Digits before the decimal point, not counting leading zeros
    /// (0.5 → 0, 12.5 → 2).
    pub fn int_digits(&self) -> usize {
        self.digits.len().saturating_sub(self.scale as usize)
    }

    /// Significant digits as MySQL's string→decimal counts them: integer
    /// digits (no leading zeros) plus every fractional digit.
    pub fn total_digits(&self) -> usize {
        self.int_digits() + self.scale as usize
    }

    /// The value with its sign flipped.
    pub fn neg(&self) -> Decimal {
        Decimal::from_parts(!self.negative, self.digits.clone(), self.scale)
    }

    pub fn abs(&self) -> Decimal {
        Decimal::from_parts(false, self.digits.clone(), self.scale)
    }

    /// Rounds (ROUND_HALF_UP, away from zero on ties) or zero-extends to
    /// exactly `new_scale` fractional digits.
    pub fn round_to_scale(&self, new_scale: u8) -> Decimal {
        if new_scale >= self.scale {
            let mut digits = self.digits.clone();
            push_zeros(&mut digits, (new_scale - self.scale) as usize);
            return Decimal::from_parts(self.negative, digits, new_scale);
        }
        let drop = (self.scale - new_scale) as usize;
        let mut digits = self.digits.clone();
        if digits.len() < drop + 1 {
            let pad = drop + 1 - digits.len();
            digits.splice(0..0, std::iter::repeat_n(0u8, pad));
        }
        let keep = digits.len() - drop;
        let round_up = digits[keep] >= 5;
        digits.truncate(keep);
        if round_up {
            increment_mag(&mut digits);
        }
        Decimal::from_parts(self.negative, digits, new_scale)
    }

    /// Drops fractional digits beyond `new_scale` without rounding
    /// (TRUNCATE()), or zero-extends.
    pub fn truncate_to_scale(&self, new_scale: u8) -> Decimal {
        if new_scale >= self.scale {
            return self.round_to_scale(new_scale);
        }
        let drop = (self.scale - new_scale) as usize;
        let mut digits = self.digits.clone();
        digits.truncate(digits.len().saturating_sub(drop));
        Decimal::from_parts(self.negative, digits, new_scale)
    }

    /// Whether the value, already at scale <= `scale`, fits `DECIMAL(precision, scale)`.
    /// Round first with [`Decimal::round_to_scale`] when the scale is larger.
    pub fn fits(&self, precision: u8, scale: u8) -> bool {
        self.scale <= scale && self.int_digits() <= precision.saturating_sub(scale) as usize
    }

    /// Rounds to `scale` and checks the result fits `DECIMAL(precision,
    /// scale)` (`CAST(x AS DECIMAL(p,s))`, storing into a column).
    pub fn to_precision(&self, precision: u8, scale: u8) -> Result<Decimal, DecimalError> {
        let rounded = self.round_to_scale(scale);
        if rounded.fits(precision, scale) {
            Ok(rounded)
        } else {
            Err(DecimalError::Overflow)
        }
    }

    /// Rounds half away from zero to an integer; `None` outside the i128
    /// range (more than 38 digits).
    pub fn to_i128_round(&self) -> Option<i128> {
        let r = self.round_to_scale(0);
        if r.digits.len() > 38 {
            return None;
        }
        let mut v: i128 = 0;
        for &d in &r.digits {
            v = v * 10 + i128::from(d);
        }
        Some(if r.negative { -v } else { v })
    }

    /// The mantissa at this value's scale (`-12.34` → -1234), if it fits in i128.
    pub fn mantissa_i128(&self) -> Option<i128> {
        if self.digits.len() > 38 {
            return None;
        }
        let mut v: i128 = 0;
        for &d in &self.digits {
            v = v * 10 + i128::from(d);
        }
        Some(if self.negative { -v } else { v })
    }

    /// Nearest double (MySQL `decimal2double` goes through the text form too).
    pub fn to_f64(&self) -> f64 {
        self.to_string().parse::<f64>().unwrap_or(0.0)
    }

    /// Aligns two magnitudes to a common scale.
    fn aligned(a: &Decimal, b: &Decimal) -> (Vec<u8>, Vec<u8>, u8) {
        let scale = a.scale.max(b.scale);
        let mut x = a.digits.clone();
        let mut y = b.digits.clone();
        push_zeros(&mut x, (scale - a.scale) as usize);
        push_zeros(&mut y, (scale - b.scale) as usize);
        (x, y, scale)
    }

    /// Applies MySQL's 65-digit result limit: fractional digits are rounded
    /// away first, too many integer digits is an overflow.
    fn fit_result(self) -> Result<Decimal, DecimalError> {
        let int_digits = self.int_digits();
        let max = MAX_PRECISION as usize;
        if int_digits > max {
            return Err(DecimalError::Overflow);
        }
        if int_digits + self.scale as usize > max {
            let new_scale = (max - int_digits) as u8;
            let rounded = self.round_to_scale(new_scale);
            if rounded.int_digits() > max {
                return Err(DecimalError::Overflow);
            }
            return Ok(rounded);
        }
        Ok(self)
    }

    fn add_signed(&self, other: &Decimal, negate_other: bool) -> Decimal {
        let other_negative = other.negative != negate_other && !other.is_zero();
        let (x, y, scale) = Decimal::aligned(self, other);
        if self.negative == other_negative {
            return Decimal::from_parts(self.negative, add_mag(&x, &y), scale);
        }
        match cmp_mag(&x, &y) {
            Ordering::Less => Decimal::from_parts(other_negative, sub_mag(&y, &x), scale),
            _ => Decimal::from_parts(self.negative, sub_mag(&x, &y), scale),
        }
    }

    /// `self + other`, scale `max(s1, s2)`.
    pub fn checked_add(&self, other: &Decimal) -> Result<Decimal, DecimalError> {
        self.add_signed(other, false).fit_result()
    }

    /// `self - other`, scale `max(s1, s2)`.
    pub fn checked_sub(&self, other: &Decimal) -> Result<Decimal, DecimalError> {
        self.add_signed(other, true).fit_result()
    }

    /// `self × other`, scale `min(s1 + s2, 30)` (rounded half up).
    pub fn checked_mul(&self, other: &Decimal) -> Result<Decimal, DecimalError> {
        // Both scales are at most 255, so the exact scale fits in u16.
        let exact_scale = u16::from(self.scale) + u16::from(other.scale);
        let mut digits = mul_mag(&self.digits, &other.digits);
        let mut scale = exact_scale;
        if scale > u16::from(MAX_SCALE) {
            // Round away the excess fractional digits, half up.
            let drop = usize::from(scale - u16::from(MAX_SCALE));
            if digits.len() < drop + 1 {
                let pad = drop + 1 - digits.len();
                digits.splice(0..0, std::iter::repeat_n(0u8, pad));
            }
            let keep = digits.len() - drop;
            let round_up = digits[keep] >= 5;
            digits.truncate(keep);
            if round_up {
                increment_mag(&mut digits);
            }
            scale = u16::from(MAX_SCALE);
        }
        Decimal::from_parts(self.negative != other.negative, digits, scale as u8).fit_result()
    }

    /// `self / other` rounded half up to `result_scale` fractional digits.
    pub fn checked_div_scale(
        &self,
        other: &Decimal,
        result_scale: u8,
    ) -> Result<Decimal, DecimalError> {
        self.div_to_scale(other, result_scale, true)
    }

    /// `self / other` cut (toward zero) after `result_scale` fractional
    /// digits, as MySQL's `decimal_div` leaves its quotient.
    pub fn checked_div_trunc(
        &self,
        other: &Decimal,
        result_scale: u8,
    ) -> Result<Decimal, DecimalError> {
        self.div_to_scale(other, result_scale, false)
    }

    fn div_to_scale(
        &self,
        other: &Decimal,
        result_scale: u8,
        round: bool,
    ) -> Result<Decimal, DecimalError> {
        if other.is_zero() {
            return Err(DecimalError::DivisionByZero);
        }
        // value × 10^rs = (ma × 10^(rs + sb - sa)) / mb; when rounding,
        // one extra digit decides.
        let extra = i32::from(round);
        let shift =
            i32::from(result_scale) + i32::from(other.scale) - i32::from(self.scale) + extra;
        let mut num = self.digits.clone();
        let mut den = other.digits.clone();
        if shift >= 0 {
            push_zeros(&mut num, shift as usize);
        } else {
            push_zeros(&mut den, (-shift) as usize);
        }
        let (mut q, _) = divmod_mag(&num, &den);
        if round {
            let last = q.pop().unwrap_or(0);
            q = strip_leading_zeros(q);
            if last >= 5 {
                increment_mag(&mut q);
            }
        } else {
            q = strip_leading_zeros(q);
        }
        Decimal::from_parts(self.negative != other.negative, q, result_scale).fit_result()
    }

    /// The quotient MySQL's `/` computes and then computes on
    /// (`do_div_mod` in strings/decimal.c): whole 9-digit groups of
    /// fraction — each operand's fraction rounded up to whole groups, plus
    /// `div_precision_increment` digits less what that rounding already
    /// added, rounded up to whole groups again — and cut there, not
    /// rounded. `1/3` is 0.333333333 inside `1/3/3`; only the final value
    /// is rounded to the expression's scale (`s1 + 4`), when it is shown
    /// or stored.
    pub fn checked_div_mysql(&self, other: &Decimal) -> Result<Decimal, DecimalError> {
        let groups = |digits: i32| (digits + 8) / 9 * 9;
        let (sa, sb) = (i32::from(self.scale), i32::from(other.scale));
        let (fa, fb) = (groups(sa), groups(sb));
        let incr = (i32::from(DIV_PRECISION_INCREMENT) - (fa - sa) - (fb - sb)).max(0);
        let frac = groups(fa + fb + incr).min(i32::from(MAX_PRECISION));
        self.checked_div_trunc(other, frac as u8)
    }

    /// MySQL `/`: scale `min(s1 + div_precision_increment(4), 30)`.
    pub fn checked_div(&self, other: &Decimal) -> Result<Decimal, DecimalError> {
        let scale = (self.scale.saturating_add(DIV_PRECISION_INCREMENT)).min(MAX_SCALE);
        self.checked_div_scale(other, scale)
    }

    /// The magnitude as `precision` decimal digits at `scale`, left-padded
    /// with zeros; `None` if the value does not fit `DECIMAL(precision, scale)`
    /// exactly (too many integer digits, or non-zero digits beyond `scale`).
    pub(crate) fn fixed_digits(&self, precision: u8, scale: u8) -> Option<Vec<u8>> {
        let mut digits = self.digits.clone();
        if self.scale > scale {
            let drop = (self.scale - scale) as usize;
            let keep = digits.len().saturating_sub(drop);
            if digits[keep..].iter().any(|&d| d != 0) {
                return None;
            }
            digits.truncate(keep);
            digits = strip_leading_zeros(digits);
        } else {
            push_zeros(&mut digits, (scale - self.scale) as usize);
        }
        if digits.len() > precision as usize {
            return None;
        }
        let mut out = vec![0u8; precision as usize - digits.len()];
        out.extend_from_slice(&digits);
        Some(out)
    }

    /// Inverse of [`Decimal::fixed_digits`].
    pub(crate) fn from_fixed_digits(negative: bool, digits: Vec<u8>, scale: u8) -> Decimal {
        Decimal::from_parts(negative, digits, scale)
    }

    /// The canonical form used by `Hash`: trailing fractional zeros removed.
    fn normalized_parts(&self) -> (bool, &[u8], u8) {
        let trailing = self
            .digits
            .iter()
            .rev()
            .take(self.scale as usize)
            .take_while(|&&d| d == 0)
            .count();
        let digits = &self.digits[..self.digits.len() - trailing];
        let scale = if digits.is_empty() {
            0
        } else {
            self.scale - trailing as u8
        };
        (self.negative, digits, scale)
    }
}

impl PartialEq for Decimal {
    fn eq(&self, other: &Decimal) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Decimal {}

impl PartialOrd for Decimal {
    fn partial_cmp(&self, other: &Decimal) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Decimal {
    fn cmp(&self, other: &Decimal) -> Ordering {
        match (self.negative, other.negative) {
            (false, true) => Ordering::Greater,
            (true, false) => Ordering::Less,
            (negative, _) => {
                let (x, y, _) = Decimal::aligned(self, other);
                let ord = cmp_mag(&x, &y);
                if negative {
                    ord.reverse()
                } else {
                    ord
                }
            }
        }
    }
}

impl Hash for Decimal {
    fn hash<H: Hasher>(&self, state: &mut H) {
        let (negative, digits, scale) = self.normalized_parts();
        negative.hash(state);
        digits.hash(state);
        scale.hash(state);
    }
}

/// Prints exactly `scale` fractional digits, as MySQL shows a DECIMAL
/// column: `12.50`, `-0.05`, `0`, `0.000`.
impl fmt::Display for Decimal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let scale = self.scale as usize;
        let mut s = String::with_capacity(self.digits.len() + 3);
        if self.negative {
            s.push('-');
        }
        let mut digits: Vec<u8> = self.digits.clone();
        if digits.len() < scale + 1 {
            let pad = scale + 1 - digits.len();
            digits.splice(0..0, std::iter::repeat_n(0u8, pad));
        }
        let int_len = digits.len() - scale;
        for &d in &digits[..int_len] {
            s.push((b'0' + d) as char);
        }
        if scale > 0 {
            s.push('.');
            for &d in &digits[int_len..] {
                s.push((b'0' + d) as char);
            }
        }
        f.write_str(&s)
    }
}

impl FromStr for Decimal {
    type Err = DecimalError;

    /// The whole text must be a number (surrounding whitespace allowed).
    fn from_str(s: &str) -> Result<Decimal, DecimalError> {
        let parsed = Decimal::parse_prefix(s.as_bytes())?;
        if s.as_bytes()[parsed.consumed..]
            .iter()
            .all(|b| b.is_ascii_whitespace())
        {
            Ok(parsed.value)
        } else {
            Err(DecimalError::BadNumber)
        }
    }
}

impl From<i64> for Decimal {
    fn from(v: i64) -> Decimal {
        Decimal::from_i64(v)
    }
}

impl From<u64> for Decimal {
    fn from(v: u64) -> Decimal {
        Decimal::from_u64(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(s: &str) -> Decimal {
        s.parse().unwrap()
    }

    #[test]
    fn decimal_parse_and_display() {
        for (text, shown) in [
            ("0", "0"),
            ("-0", "0"),
            ("-0.00", "0.00"),
            ("12.345", "12.345"),
            ("-12.345", "-12.345"),
            ("  +7 ", "7"),
            ("1.", "1"),
            (".5", "0.5"),
            ("-.5", "-0.5"),
            ("0001.10", "1.10"),
            ("1e3", "1000"),
            ("1.5e3", "1500"),
            ("1.5E-3", "0.0015"),
            ("-2.5e+2", "-250"),
            ("123e-5", "0.00123"),
            ("0e10", "0"),
        ] {
            assert_eq!(d(text).to_string(), shown, "{text}");
        }
        for bad in ["", "abc", ".", "-", "+.", "e5", "1.2.3", "12abc"] {
            assert!(bad.parse::<Decimal>().is_err(), "{bad:?}");
        }
        // Exponent without digits is not part of the number.
        let p = Decimal::parse_prefix(b"12e").unwrap();
        assert_eq!(p.consumed, 2);
        let p = Decimal::parse_prefix(b" 4.5xyz").unwrap();
        assert_eq!((p.value.to_string().as_str(), p.consumed), ("4.5", 4));
        assert_eq!(
            Decimal::parse_prefix(b"1e999999999999").unwrap_err(),
            DecimalError::Overflow
        );
        assert!(Decimal::parse_prefix(b"1e-999999999999")
            .unwrap()
            .value
            .is_zero());
    }

    #[test]
    fn decimal_round_half_away_from_zero() {
        for (v, s, want) in [
            ("1.005", 2, "1.01"),
            ("-1.005", 2, "-1.01"),
            ("1.004", 2, "1.00"),
            ("2.5", 0, "3"),
            ("-2.5", 0, "-3"),
            ("0.5", 0, "1"),
            ("0.49", 0, "0"),
            ("-0.4", 0, "0"),
            ("9.995", 2, "10.00"),
            ("999.995", 2, "1000.00"),
            ("0.0005", 3, "0.001"),
            ("0.00049", 3, "0.000"),
            ("1.5", 3, "1.500"),
            ("0.000001", 2, "0.00"),
        ] {
            assert_eq!(d(v).round_to_scale(s).to_string(), want, "{v} at {s}");
        }
        assert_eq!(d("-1.999").truncate_to_scale(1).to_string(), "-1.9");
        assert!(!d("-0.04").round_to_scale(1).is_negative());
    }

    #[test]
    fn decimal_fits_precision() {
        assert!(d("999.99").fits(5, 2));
        assert!(!d("1000.00").fits(5, 2));
        assert!(d("-999.99").fits(5, 2));
        assert!(d("0.5").fits(1, 1));
        assert!(!d("1").fits(1, 1));
        assert!(d("0").fits(1, 0));
        assert_eq!(d("999.995").round_to_scale(2).int_digits(), 4);
        assert_eq!(
            d("999.994").to_precision(5, 2).unwrap().to_string(),
            "999.99"
        );
        assert_eq!(d("999.995").to_precision(5, 2), Err(DecimalError::Overflow));
        assert_eq!(d("-0.005").to_precision(1, 0).unwrap().to_string(), "0");
    }

    #[test]
    fn decimal_compare_and_hash() {
        use std::collections::hash_map::DefaultHasher;
        let ordered = [
            "-1000", "-1.5", "-1.05", "-1", "-0.001", "0", "0.001", "0.01", "1", "1.5", "2", "10",
            "100.5",
        ];
        for i in 0..ordered.len() {
            for j in 0..ordered.len() {
                assert_eq!(d(ordered[i]).cmp(&d(ordered[j])), i.cmp(&j), "{i} {j}");
            }
        }
        assert_eq!(d("1.0"), d("1.000"));
        let h = |x: &Decimal| {
            let mut s = DefaultHasher::new();
            x.hash(&mut s);
            s.finish()
        };
        assert_eq!(h(&d("1.0")), h(&d("1.000")));
        assert_eq!(h(&d("0.00")), h(&d("0")));
        assert_ne!(h(&d("1.0")), h(&d("10")));
    }

    #[test]
    fn decimal_arithmetic() {
        let add = |a: &str, b: &str| d(a).checked_add(&d(b)).unwrap().to_string();
        let sub = |a: &str, b: &str| d(a).checked_sub(&d(b)).unwrap().to_string();
        let mul = |a: &str, b: &str| d(a).checked_mul(&d(b)).unwrap().to_string();
        let div = |a: &str, b: &str| d(a).checked_div(&d(b)).unwrap().to_string();
        assert_eq!(add("1.5", "2.25"), "3.75");
        assert_eq!(add("-1.5", "2.25"), "0.75");
        assert_eq!(add("1.5", "-2.25"), "-0.75");
        assert_eq!(add("-1.5", "-2.25"), "-3.75");
        assert_eq!(add("0.1", "-0.1"), "0.0");
        assert_eq!(add("99999999999999999999", "1"), "100000000000000000000");
        assert_eq!(sub("1", "0.001"), "0.999");
        assert_eq!(sub("-1", "-1"), "0");
        assert_eq!(mul("1.5", "-2.25"), "-3.375");
        assert_eq!(mul("0.1", "0.1"), "0.01");
        assert_eq!(mul("-0.5", "0"), "0.0");
        assert_eq!(
            mul("123456789012345678901234567890", "1000000000"),
            "123456789012345678901234567890000000000"
        );
        // Scale capped at 30.
        assert_eq!(
            mul(
                "0.0000000000000000000000000001",
                "0.00000000000000000000015"
            ),
            "0.000000000000000000000000000000"
        );
        assert_eq!(div("1", "3"), "0.3333");
        assert_eq!(div("2", "3"), "0.6667");
        assert_eq!(div("-2", "3"), "-0.6667");
        assert_eq!(div("10.00", "4"), "2.500000");
        assert_eq!(div("1", "0.5"), "2.0000");
        assert_eq!(div("7", "-7"), "-1.0000");
        assert_eq!(
            d("1").checked_div(&d("0.000")).unwrap_err(),
            DecimalError::DivisionByZero
        );
        let big = "9".repeat(65);
        assert_eq!(
            d(&big).checked_add(&d("1")).unwrap_err(),
            DecimalError::Overflow
        );
        // 60 integer digits + 10 fractional → fractional digits give way.
        let sixty = format!("{}.1234567891", "9".repeat(60));
        let r = d(&sixty).checked_add(&d("0")).unwrap();
        assert_eq!(r.scale(), 5);
        assert_eq!(r.total_digits(), 65);
    }

    #[test]
    fn decimal_arithmetic_matches_i128_randomized() {
        let mut state = 0x1234_5678_9abc_def0u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for _ in 0..3000 {
            let a = (next() % 2_000_000_000) as i128 - 1_000_000_000;
            let b = (next() % 2_000_000) as i128 - 1_000_000;
            let (sa, sb) = ((next() % 5) as u8, (next() % 5) as u8);
            let (x, y) = (Decimal::from_mantissa(a, sa), Decimal::from_mantissa(b, sb));
            let s = sa.max(sb);
            let scale_to = |m: i128, from: u8| m * 10i128.pow(u32::from(s - from));
            let sum = x.checked_add(&y).unwrap();
            assert_eq!(sum.mantissa_i128(), Some(scale_to(a, sa) + scale_to(b, sb)));
            assert_eq!(sum.scale(), s);
            let diff = x.checked_sub(&y).unwrap();
            assert_eq!(
                diff.mantissa_i128(),
                Some(scale_to(a, sa) - scale_to(b, sb))
            );
            let prod = x.checked_mul(&y).unwrap();
            assert_eq!(prod.scale(), sa + sb);
            assert_eq!(prod.mantissa_i128(), Some(a * b));
            assert_eq!(x.cmp(&y), (scale_to(a, sa)).cmp(&scale_to(b, sb)));
            if b != 0 {
                // Check division against exact rational rounding.
                let q = x.checked_div(&y).unwrap();
                let rs = q.scale();
                // a/10^sa / (b/10^sb) * 10^rs = a * 10^(rs+sb) / (b * 10^sa)
                let num = a * 10i128.pow(u32::from(rs) + u32::from(sb) + 1);
                let den = b * 10i128.pow(u32::from(sa));
                let t = num / den; // truncated toward zero, one extra digit
                let mut m = t / 10;
                if (t % 10).abs() >= 5 {
                    m += if t < 0 { -1 } else { 1 };
                }
                assert_eq!(q.mantissa_i128(), Some(m), "{x} / {y}");
            }
        }
    }

    #[test]
    fn decimal_conversions() {
        assert_eq!(Decimal::from_f64(0.1).unwrap().to_string(), "0.1");
        assert_eq!(
            Decimal::from_f64(-1.5e-7).unwrap().to_string(),
            "-0.00000015"
        );
        assert_eq!(
            Decimal::from_f64(1e20).unwrap().to_string(),
            "100000000000000000000"
        );
        assert!(Decimal::from_f64(f64::NAN).is_none());
        assert_eq!(d("-2.5").to_i128_round(), Some(-3));
        assert_eq!(d("2.4999").to_i128_round(), Some(2));
        assert_eq!(d("123.456").to_f64(), 123.456);
        assert_eq!(
            Decimal::from_i64(i64::MIN).to_string(),
            "-9223372036854775808"
        );
        assert_eq!(
            Decimal::from_u64(u64::MAX).to_string(),
            "18446744073709551615"
        );
        assert_eq!(Decimal::from_mantissa(-5, 3).to_string(), "-0.005");
        assert_eq!(d("12.30").fixed_digits(5, 3), Some(vec![1, 2, 3, 0, 0]));
        assert_eq!(d("12.301").fixed_digits(5, 2), None);
        assert_eq!(d("1234.5").fixed_digits(5, 2), None);
    }
}
