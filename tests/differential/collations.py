"""Collation weights: quire against MariaDB 10.11, code point by code point.

quire's collations (crates/engine/src/types/collation.rs) give every string
a weight string whose byte order is the collation's order; those bytes go
into index keys, so a wrong weight is a wrong index. This script asks
MariaDB for `WEIGHT_STRING()` of every Basic Multilingual Plane code point
(every byte for latin1, 0..127 for ascii), a sample of supplementary code
points and a list of multi-character strings, asks quire for the same
weights (the `collation_dump` example of quire-engine: no server), and
compares them per collation:

* **exact** (`utf8mb4_general_ci`, `utf8mb3_general_ci`,
  `latin1_swedish_ci`, `latin1_bin`, `ascii_general_ci`, `ascii_bin`,
  `binary`): the bytes must be identical (general_ci: two bytes
  big-endian per character; latin1 and ascii: one byte).
* **bin** (`utf8mb4_bin`, `utf8mb3_bin`): MariaDB's weight is three bytes
  of code point per character, quire's the UTF-8 bytes (the same order);
  MariaDB's is decoded and must equal quire's.
* **classes** (`utf8mb4_unicode_ci`, `utf8mb3_unicode_ci`): MariaDB uses
  UCA 4.0.0 weights, quire ICU4X's CLDR root at primary strength, so the
  bytes differ; the partition into equal classes and the order of the
  classes are compared, and every code point where they disagree is
  counted, by category and by script.

PAD SPACE: MariaDB's `WEIGHT_STRING` keeps trailing spaces and quire
strips them, so multi-character strings are weighed on MariaDB without
their trailing spaces. Pairs of the sample strings are also compared with
`STRCMP` on both sides: quire's order must be MariaDB's NO PAD variant of
the collation on the trimmed strings exactly (that is what quire does), and
where the PAD SPACE collation orders them differently, the pair is
explained by the known difference `collation-pad-space-strip`.

Disagreements in the exact and bin groups always fail. In the classes
group the code points must fall in the categories
`collation-unicode-ci-uca-version` of known_differences.toml explains
(characters UCA 4.0.0 did not have, and weight changes between UCA 4.0.0
and CLDR's root); the counts are printed and must stay under the bounds
below, so a change in ICU4X or in quire shows up.

    python3 tests/differential/collations.py            # builds the example, starts MariaDB
    python3 tests/differential/collations.py --port 34680 --dump target/release/examples/collation_dump

Exit status 0 when every disagreement is explained, 1 otherwise.
"""

import argparse
import atexit
import collections
import os
import subprocess
import sys
import tempfile
import time
import tomllib
import unicodedata

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

try:
    import pymysql
except ImportError:  # pragma: no cover - installed on first use
    subprocess.check_call([sys.executable, "-m", "pip", "install", "--quiet",
                           "--disable-pip-version-check", "pymysql"])
    import pymysql

# Collations both servers have: name -> (group, character set MariaDB
# converts to, NO PAD variant in MariaDB or None).
COLLATIONS = {
    "utf8mb4_general_ci": ("exact", "utf8mb4", "utf8mb4_general_nopad_ci"),
    "utf8mb3_general_ci": ("exact", "utf8mb3", "utf8mb3_general_nopad_ci"),
    "utf8mb4_bin": ("bin", "utf8mb4", "utf8mb4_nopad_bin"),
    "utf8mb3_bin": ("bin", "utf8mb3", "utf8mb3_nopad_bin"),
    "utf8mb4_unicode_ci": ("classes", "utf8mb4", "utf8mb4_unicode_nopad_ci"),
    "utf8mb3_unicode_ci": ("classes", "utf8mb3", "utf8mb3_unicode_nopad_ci"),
    "latin1_swedish_ci": ("exact", "latin1", "latin1_swedish_nopad_ci"),
    "latin1_bin": ("exact", "latin1", "latin1_nopad_bin"),
    "ascii_general_ci": ("exact", "ascii", "ascii_general_nopad_ci"),
    "ascii_bin": ("exact", "ascii", "ascii_nopad_bin"),
    "binary": ("exact", "binary", None),
}

# Supplementary code points sampled (every plane's first assigned blocks,
# emoji, CJK extension B, private use, the last code point).
SUPPLEMENTARY = [0x10000, 0x10001, 0x10400, 0x10428, 0x1D400, 0x1D538, 0x1F600, 0x1F601,
                 0x1F9FF, 0x20000, 0x2A6D6, 0x2F800, 0xE0001, 0xF0000, 0x10FFFD, 0x10FFFF]

# Multi-character strings: trailing and leading spaces, characters below
# space, expansions and ligatures, combining marks, case pairs that are not
# one-to-one.
STRINGS = [
    "", " ", "  ", "a", "A", "a ", "a  ", " a", "a\t", "a\n", "a\x00", "a\x1f", "a!", "ab", "a b",
    "ss", "SS", "ß", "ẞ", "sß", "æ", "ae", "AE", "Æ", "œ", "oe", "ﬁ", "fi", "ﬀ", "ff", "ĳ", "ij",
    "e\u0301", "é", "E\u0301", "a\u0300b", "à", "A\u030a", "Å", "å", "ǅ", "Ǆ", "ǆ", "dž",
    "ı", "i", "I", "İ", "ŉ", "ʼn", "ÿ", "Ÿ", "y", "µ", "μ", "Μ", "½", "1/2", "ü", "ue", "Ü", "y",
    "ö", "Ø", "ø", "o", "z", "Z", "zz", "Þ", "th", "Ð", "d", "ð", "ñ", "n", "ç", "c",
    "Σ", "σ", "ς", "Ω", "Ω", "K", "K", "Å", "ǰ", "ﬃ", "ŀ", "l·", "€", "…", "‰", "™", "•",
    "中文", "日本", "한국", "абв", "АБВ", "ё", "е", "Ё", "ђ", "\u00a0", "a\u00a0", "\u2000",
    "\U0001f600", "\U0001f601", "a\U0001f600", "\U00020000", "\ufffd", "\uffff",
]

# The classes group: disagreements quire may have with MariaDB's UCA 4.0.0
# and how many code points each category may hold (measured with ICU4X
# 2.4.0; a bound is a little above the measurement so that only a real
# change fails). Any other category fails.
UNICODE_CI_BOUNDS = {
    # Characters UCA 4.0.0 did not list (MariaDB gives them implicit weights
    # in code point order, after every listed character): 11 172 Hangul
    # syllables (which ICU weighs as their jamo), scripts and letters
    # encoded since Unicode 4.0. Measured: 14 770 out of order, 1 426 in a
    # different class.
    "implicit-in-uca400/order": 15000,
    "implicit-in-uca400/split": 1500,
    # Characters UCA 4.0.0 ignores that ICU weighs (measured 1) and the
    # other way round (measured 11: soft hyphen, tatweel, Thai/Lao/Tibetan/
    # Khmer signs, a Mongolian variation selector).
    "ignorable-in-uca400/split": 5,
    "ignorable-in-cldr/split": 15,
    # Characters both weigh, differently: ø/đ/ł/ħ and the Cyrillic letters
    # with diaeresis are their own letters since UCA 5.x/6.x (secondary
    # variants of o/d/l/h/а/е in 4.0.0), Georgian, spacing accents, brackets
    # and quotation marks reordered, U+FFFD. Measured 138 and 119.
    "reweighted/order": 150,
    "reweighted/split": 130,
    # Pairs of sample strings ordered differently that hold one of the
    # code points above (ẞ, U+FFFD). Measured 314 (utf8mb4) / 302 (utf8mb3).
    "pair order/with a differing code point": 400,
}


def log(*a):
    print(*a, flush=True)


# ---------------------------------------------------------------------------
# MariaDB


class Maria:
    def __init__(self, port):
        self.c = pymysql.connect(host="127.0.0.1", port=port, user="root", charset="utf8mb4",
                                 autocommit=True)
        self.cur = self.c.cursor()
        self.cur.execute("SET NAMES utf8mb4 COLLATE utf8mb4_bin")

    def column(self, exprs, batch=1000):
        """Evaluates many scalar expressions, batch of them per SELECT."""
        out = []
        for i in range(0, len(exprs), batch):
            self.cur.execute("SELECT " + ", ".join(exprs[i:i + batch]))
            out.extend(self.cur.fetchone())
        return out


def lit(s, charset):
    """A SQL literal of string s in MariaDB's character set `charset`."""
    if charset == "binary":
        return "_binary 0x" + (s.encode().hex() or "00") if s else "_binary ''"
    if charset == "latin1":
        return f"_latin1 0x{s.hex()}" if s else "_latin1 ''"
    if not s:
        return f"CONVERT('' USING {charset})"
    u32 = "".join(f"{ord(ch):08X}" for ch in s)
    return f"CONVERT(_utf32 0x{u32} USING {charset})"


def maria_weight_expr(s, coll, charset):
    if coll == "binary":
        return f"HEX(WEIGHT_STRING({lit(s, 'binary')}))"
    return f"HEX(WEIGHT_STRING({lit(s, charset)} COLLATE {coll}))"


# ---------------------------------------------------------------------------
# quire


class Dump:
    def __init__(self, path):
        self.path = path

    def run(self, coll, lines):
        p = subprocess.run([self.path, coll, "-"], input="\n".join(lines) + "\n", text=True,
                           capture_output=True, check=True)
        out = p.stdout.split("\n")[:-1]
        assert len(out) == len(lines), (coll, len(out), len(lines))
        return out

    def weights(self, coll, strings):
        return self.run(coll, [s.encode().hex().upper() or "-" for s in strings])

    def cmps(self, coll, pairs):
        return [int(x) for x in self.run(
            coll, [f"{a.encode().hex() or '-'} {b.encode().hex() or '-'}" for a, b in pairs])]


# ---------------------------------------------------------------------------
# Comparison


def items(coll, charset, maria):
    """The strings compared one by one for a collation: (label, text) with
    text as quire holds it (UTF-8 str), or for latin1 the byte MariaDB
    gets and the character MariaDB maps it to."""
    if charset == "latin1":
        chars = maria.column([f"HEX(CONVERT(_latin1 0x{b:02X} USING utf32))" for b in range(256)])
        return [(f"byte {b:02X}", chr(int(h, 16)), bytes([b])) for b, h in enumerate(chars)]
    if charset == "ascii":
        cps = range(0x80)
    else:
        cps = [cp for cp in range(0x10000) if not 0xD800 <= cp <= 0xDFFF]
        if charset in ("utf8mb4", "binary"):
            cps += SUPPLEMENTARY
    return [(f"U+{cp:04X}", chr(cp), None) for cp in cps]


def representable(s, charset):
    if charset == "ascii":
        return all(ord(c) < 0x80 for c in s)
    if charset == "utf8mb3":
        return all(ord(c) <= 0xFFFF for c in s)
    if charset == "latin1":
        try:
            s.encode("cp1252")
            return True
        except UnicodeEncodeError:
            return False
    return True


def maria_single(maria, coll, charset, its):
    exprs = []
    for _, s, raw in its:
        if s == " " and coll != "binary":
            # PAD SPACE: MariaDB's WEIGHT_STRING keeps a trailing space,
            # quire's weight drops it (see the module docs).
            exprs.append(maria_weight_expr("", coll, charset))
        elif raw is not None:
            exprs.append(f"HEX(WEIGHT_STRING(_latin1 0x{raw.hex()} COLLATE {coll}))")
        else:
            exprs.append(maria_weight_expr(s, coll, charset))
    return maria.column(exprs)


def bin_to_utf8(hexw, width):
    """MariaDB's _bin weight (the code point in `width` bytes per character:
    3 for utf8mb4, 2 for utf8mb3) as the UTF-8 bytes quire weighs with."""
    b = bytes.fromhex(hexw)
    cps = (int.from_bytes(b[i:i + width], "big") for i in range(0, len(b), width))
    return "".join(map(chr, cps)).encode().hex().upper()


def normalise(group, charset, hexw):
    if hexw is None:
        return None
    if group == "bin":
        return bin_to_utf8(hexw, 3 if charset == "utf8mb4" else 2)
    return hexw.upper()


def script(ch):
    """A rough script label: the first word of the character's name."""
    name = unicodedata.name(ch, "")
    if not name:
        return "unnamed" if unicodedata.category(ch) != "Cn" else "unassigned"
    first = name.split()[0]
    return "CJK" if first.startswith("CJK") else first


def lis_keep(seq):
    """Indexes of one longest strictly increasing subsequence of seq."""
    import bisect
    tails, tails_i, prev = [], [], [-1] * len(seq)
    for i, x in enumerate(seq):
        j = bisect.bisect_left(tails, x)
        if j == len(tails):
            tails.append(x)
            tails_i.append(i)
        else:
            tails[j] = x
            tails_i[j] = i
        prev[i] = tails_i[j - 1] if j > 0 else -1
    keep, i = set(), tails_i[-1] if tails_i else -1
    while i >= 0:
        keep.add(i)
        i = prev[i]
    return keep


def compare_classes(its, mw, qw):
    """Equal classes and their order, MariaDB vs quire. Returns
    {category: [label, ...]} of the code points that disagree.

    Partition: a MariaDB class maps to the quire weight most of its members
    have, a quire class to the MariaDB weight most of its members have; a
    code point off either majority is split from its class. Order: the
    classes left, in MariaDB's order, must have increasing quire weights;
    the classes off one longest increasing run are out of order."""
    bad = collections.defaultdict(list)
    m_to_q = collections.defaultdict(collections.Counter)
    q_to_m = collections.defaultdict(collections.Counter)
    for m, q in zip(mw, qw):
        m_to_q[m][q] += 1
        q_to_m[q][m] += 1
    m_major = {m: c.most_common(1)[0][0] for m, c in m_to_q.items()}
    q_major = {q: c.most_common(1)[0][0] for q, c in q_to_m.items()}
    split = {i for i, (m, q) in enumerate(zip(mw, qw)) if m_major[m] != q or q_major[q] != m}
    members = collections.defaultdict(list)
    for i, m in enumerate(mw):
        if i not in split:
            members[m].append(i)
    whole = sorted(members, key=bytes.fromhex)
    keep = lis_keep([bytes.fromhex(qw[members[m][0]]) for m in whole])
    order = {i for k, m in enumerate(whole) if k not in keep for i in members[m]}
    for i in sorted(split | order):
        label, ch, _ = its[i]
        kind = "split" if i in split else "order"
        bad[category(ch, mw[i], qw[i], kind)].append(label)
    return bad


def category(ch, m, q, kind):
    """Why a code point's class or place differs (the known difference's
    categories)."""
    if ord(ch) > 0xFFFF:
        return f"supplementary/{kind}"
    if m == "":
        return f"ignorable-in-uca400/{kind}"
    if m.startswith("FBC") or m.startswith("FB4") or m.startswith("FB8"):
        return f"implicit-in-uca400/{kind}"
    if q == "":
        return f"ignorable-in-cldr/{kind}"
    return f"reweighted/{kind}"


def check_single(coll, group, charset, maria, dump):
    its = items(coll, charset, maria)
    mw = [normalise(group, charset, h) for h in maria_single(maria, coll, charset, its)]
    qw = dump.weights(coll, [s for _, s, _ in its])
    if group != "classes":
        bad = [(label, m, q) for (label, _, _), m, q in zip(its, mw, qw) if m != q]
        return len(its), {"weight": bad}
    return len(its), compare_classes(its, mw, qw)


def check_strings(coll, group, charset, nopad, maria, dump, differing):
    """Weights of the multi-character strings (trailing spaces trimmed on
    MariaDB's side), and the order of every pair. In the classes group a
    pair that holds a code point already counted as differing (`differing`)
    is explained by it."""
    strs = [s for s in dict.fromkeys(STRINGS) if representable(s, charset)]
    res = {}
    mexpr = []
    for s in strs:
        t = s.rstrip(" ") if coll != "binary" else s
        if charset == "latin1":
            mexpr.append(f"HEX(WEIGHT_STRING({lit(t.encode('cp1252'), 'latin1')} COLLATE {coll}))")
        else:
            mexpr.append(maria_weight_expr(t, coll, charset))
    mw = [normalise(group, charset, h) for h in maria.column(mexpr)]
    qw = dump.weights(coll, strs)
    if group != "classes":
        res["string weight"] = [(repr(s), m, q) for s, m, q in zip(strs, mw, qw) if m != q]
    pairs = [(a, b) for a in strs for b in strs]

    def strcmp(c, a, b):
        if charset == "latin1":
            la, lb = lit(a.encode("cp1252"), "latin1"), lit(b.encode("cp1252"), "latin1")
        elif charset == "binary":
            la, lb = lit(a, "binary"), lit(b, "binary")
        else:
            la, lb = lit(a, charset), lit(b, charset)
        return f"STRCMP({la} COLLATE {c}, {lb} COLLATE {c})" if c != "binary" else f"STRCMP({la}, {lb})"

    mpad = [int(x) for x in maria.column([strcmp(coll, a, b) for a, b in pairs])]
    if nopad:
        mnopad = [int(x) for x in maria.column(
            [strcmp(nopad, a.rstrip(" "), b.rstrip(" ")) for a, b in pairs])]
    else:
        mnopad = mpad
    qc = dump.cmps(coll, pairs)
    model, padspace, explained = [], [], []
    for (a, b), p, n, q in zip(pairs, mpad, mnopad, qc):
        if q != n and group == "classes" and any(c in differing for c in a + b):
            explained.append((f"{a!r} vs {b!r}", n, q))
        elif q != n:
            model.append((f"{a!r} vs {b!r}", n, q))
        elif q != p:
            padspace.append((f"{a!r} vs {b!r}", p, q))
    res["pair order (NO PAD, trimmed)"] = model
    if explained:
        res["pair order/with a differing code point"] = explained
    return len(strs), len(pairs), res, padspace


def build_dump():
    subprocess.check_call(["cargo", "build", "-q", "--release", "-p", "quire-engine",
                           "--example", "collation_dump"], cwd=ROOT)
    return os.path.join(ROOT, "target", "release", "examples", "collation_dump")


def start_mariadb():
    from servers import MariaDB
    work = tempfile.mkdtemp(prefix="collations-")
    m = MariaDB(work)
    atexit.register(lambda: (m.stop(), __import__("shutil").rmtree(work, ignore_errors=True)))
    m.start()
    return m.port


def known_ids():
    with open(os.path.join(HERE, "known_differences.toml"), "rb") as f:
        return {e["id"] for e in tomllib.load(f).get("difference", [])}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--port", type=int, help="a running MariaDB 10.11 (default: start a private one)")
    ap.add_argument("--dump", help="the collation_dump binary (default: cargo build --release)")
    ap.add_argument("--only", help="comma-separated collations (default: all)")
    ap.add_argument("--seconds", type=float, default=0, help="fail if the comparison takes longer")
    ap.add_argument("--show", type=int, default=8, help="disagreements listed per category")
    args = ap.parse_args()

    dump = Dump(args.dump or build_dump())
    t0 = time.monotonic()
    maria = Maria(args.port or start_mariadb())
    known = known_ids()
    failed = False
    names = args.only.split(",") if args.only else list(COLLATIONS)
    for coll in names:
        group, charset, nopad = COLLATIONS[coll]
        n, bad = check_single(coll, group, charset, maria, dump)
        differing = {chr(int(x[2:], 16)) for v in bad.values() for x in v if isinstance(x, str)}
        ns, npairs, sbad, padspace = check_strings(coll, group, charset, nopad, maria, dump, differing)
        bad.update(sbad)
        total = sum(len(v) for v in bad.values())
        log(f"{coll}: {n} code points, {ns} strings, {npairs} pairs compared ({group}); "
            f"{total} disagreements; {len(padspace)} pairs ordered differently by PAD SPACE")
        for cat, lst in sorted(bad.items()):
            if not lst:
                continue
            explained = group == "classes" and cat in UNICODE_CI_BOUNDS
            bound = UNICODE_CI_BOUNDS.get(cat)
            ok = explained and "collation-unicode-ci-uca-version" in known and bound is not None and len(lst) <= bound
            failed |= not ok
            tag = "explained (collation-unicode-ci-uca-version)" if ok else "UNEXPLAINED"
            log(f"  {cat}: {len(lst)} {tag}" + (f", bound {bound}" if bound is not None else ""))
            if not ok or group == "classes":
                for x in lst[:args.show]:
                    log(f"    {x}")
            if group == "classes":
                by = collections.Counter(script(chr(int(x[2:], 16))) for x in lst
                                         if isinstance(x, str) and x.startswith("U+"))
                log("    by script: " + ", ".join(f"{k} {v}" for k, v in by.most_common(12)))
        if padspace:
            ok = "collation-pad-space-strip" in known
            failed |= not ok
            log(f"  PAD SPACE pairs: {len(padspace)} " + ("explained (collation-pad-space-strip)" if ok else "UNEXPLAINED"))
            for x in padspace[:args.show]:
                log(f"    {x}")
    took = time.monotonic() - t0
    log(f"collations: {len(names)} compared in {took:.1f} s; " + ("FAILED" if failed else "all explained"))
    if args.seconds and took > args.seconds:
        log(f"collations: took longer than {args.seconds} s")
        failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
