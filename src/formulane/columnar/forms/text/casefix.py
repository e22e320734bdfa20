"""Where an engine's own case mapping differs from the scalar engine's (Excel's UPPER/LOWER).

Contract: for each engine and each mapping (``upper``/``lower``), `FIX` lists the code points
whose mapping by the engine differs from the scalar engine's one-to-one mapping (`_map_chars`
in `functions.text`), alone or in context (the final sigma of a full lower-case mapping). On a
text with none of these characters the engine's own mapping *is* the scalar engine's, so the
forms use it there and pay for the one-to-one table only on the (rare) texts that hold one.

The sets are data, not assumptions: tests/columnar/test_text_casefix.py maps every code point
(alone and between letters) with each engine and with the scalar engine and fails when a code
point that differs is missing here (a new polars, DuckDB or Python may move the set; that test
prints the ranges to paste). The usual suspects, all found by that comparison: special casings
that map one character to several (ß -> SS, ŉ, ǰ, ΐ, the ligatures ﬀ-ﬗ, the Greek iota
subscripts ᾀ-ῼ, which DuckDB maps to their title forms), İ (lower: i + combining dot), capital
sigma (Rust's final sigma), and letters newer than Python's Unicode (Garay, Kirat Rai, the
Latin additions at U+A7CB-U+A7DC), which the engines map and Python keeps.

SQL forms are rendered for several dialects, so they use the union of every engine's set
(`sql_fix`): the SpecialCasing characters every full mapping (Rust, Java, ICU) changes plus
DuckDB's own. Only DuckDB is checked here (Spark runs the operator and logic cases only).

PROPER on polars likewise uses ``str.to_titlecase`` on texts without a character of
``FIX["polars", "proper"]``: those where polars' word rule (a letter after a character that
is not *Alphabetic*) or its mapping (title case for the first letter, upper/lower case for
cased non-letters such as Ⅻ or ⓐ) differs from Excel's (a letter after a character that is
not a letter, `str.isalpha`; non-letters kept): mostly combining vowel signs, which Unicode
calls Alphabetic, and the title-case digraphs (ǅ).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Iterable

#: (engine, mapping) -> the code points the engine maps differently, as hexadecimal code points
#: and inclusive ranges (``proper``: polars ``str.to_titlecase`` against PROPER, see the
#: module docs), read by `_parse`.
_FIX: dict[tuple[str, str], str] = {
    ("polars", "upper"): (
        "DF 149 19B 1F0 264 390 3B0 587 1C8A 1E96-1E9A 1F50 1F52 1F54 1F56 1F80-1FAF "
        "1FB2-1FB4 1FB6-1FB7 1FBC 1FC2-1FC4 1FC6-1FC7 1FCC 1FD2-1FD3 1FD6-1FD7 1FE2-1FE4 "
        "1FE6-1FE7 1FF2-1FF4 1FF6-1FF7 1FFC A7CD A7CF A7D3 A7D5 A7DB FB00-FB06 FB13-FB17 "
        "10D70-10D85 16EBB-16ED3 "
    ),
    ("polars", "lower"): (
        "130 3A3 1C89 A7CB-A7CC A7CE A7D2 A7D4 A7DA A7DC 10D50-10D65 16EA0-16EB8 "
    ),
    ("polars", "proper"): (
        "DF 130 149 19B 1C4-1CC 1F0-1F3 264 345 363-36F 390 3A3 3B0 587 5B0-5BD 5BF 5C1-5C2 "
        "5C4-5C5 5C7 610-61A 64B-657 659-65F 670 6D6-6DC 6E1-6E4 6E7-6E8 6ED 711 730-73F "
        "7A6-7B0 816-817 81B-823 825-827 829-82C 88F 897 8D4-8DF 8E3-8E9 8F0-903 93A-93B "
        "93E-94C 94E-94F 955-957 962-963 981-983 9BE-9C4 9C7-9C8 9CB-9CC 9D7 9E2-9E3 A01-A03 "
        "A3E-A42 A47-A48 A4B-A4C A51 A70-A71 A75 A81-A83 ABE-AC5 AC7-AC9 ACB-ACC AE2-AE3 AFA-"
        "AFC B01-B03 B3E-B44 B47-B48 B4B-B4C B56-B57 B62-B63 B82 BBE-BC2 BC6-BC8 BCA-BCC BD7 "
        "C00-C04 C3E-C44 C46-C48 C4A-C4C C55-C56 C5C C62-C63 C81-C83 CBE-CC4 CC6-CC8 CCA-CCC "
        "CD5-CD6 CDC CE2-CE3 CF3 D00-D03 D3E-D44 D46-D48 D4A-D4C D57 D62-D63 D81-D83 DCF-DD4 "
        "DD6 DD8-DDF DF2-DF3 E31 E34-E3A E4D EB1 EB4-EB9 EBB-EBC ECD F71-F83 F8D-F97 F99-FBC "
        "102B-1036 1038 103B-103E 1056-1059 105E-1060 1062-1064 1067-106D 1071-1074 1082-108D "
        "108F 109A-109D 10D0-10FA 10FD-10FF 16EE-16F0 1712-1713 1732-1733 1752-1753 1772-1773 "
        "17B6-17C8 1885-1886 18A9 1920-192B 1930-1938 1A17-1A1B 1A55-1A5E 1A61-1A74 1ABF-1AC0 "
        "1ACC-1ACE 1B00-1B04 1B35-1B43 1B80-1B82 1BA1-1BA9 1BAC-1BAD 1BE7-1BF1 1C24-1C36 "
        "1C89-1C8A 1DD3-1DF4 1E96-1E9A 1F50 1F52 1F54 1F56 1F80-1F87 1F90-1F97 1FA0-1FA7 "
        "1FB2-1FB4 1FB6-1FB7 1FC2-1FC4 1FC6-1FC7 1FD2-1FD3 1FD6-1FD7 1FE2-1FE4 1FE6-1FE7 "
        "1FF2-1FF4 1FF6-1FF7 2160-2182 2185-2188 24B6-24E9 2DE0-2DFF 3007 3021-3029 3038-303A "
        "A674-A67B A69E-A69F A6E6-A6EF A7CB-A7CF A7D2-A7D5 A7DA-A7DC A7F1 A802 A80B A823-A827 "
        "A880-A881 A8B4-A8C3 A8C5 A8FF A926-A92A A947-A952 A980-A983 A9B4-A9BF A9E5 AA29-AA36 "
        "AA43 AA4C-AA4D AA7B-AA7D AAB0 AAB2-AAB4 AAB7-AAB8 AABE AAEB-AAEF AAF5 ABE3-ABEA "
        "FB00-FB06 FB13-FB17 FB1E 10140-10174 10341 1034A 10376-1037A 103D1-103D5 105C0-105F3 "
        "10940-10959 10A01-10A03 10A05-10A06 10A0C-10A0F 10D24-10D27 10D4A-10D65 10D69 "
        "10D6F-10D85 10EAB-10EAC 10EC2-10EC7 10EFA-10EFC 11000-11002 11038-11045 11073-11074 "
        "11080-11082 110B0-110B8 110C2 11100-11102 11127-11132 11145-11146 11180-11182 "
        "111B3-111BF 111CE-111CF 1122C-11234 11237 1123E-11241 112DF-112E8 11300-11303 "
        "1133E-11344 11347-11348 1134B-1134C 11357 11362-11363 11380-11389 1138B 1138E "
        "11390-113B5 113B7-113C0 113C2 113C5 113C7-113CA 113CC-113CD 113D1 113D3 11435-11441 "
        "11443-11445 114B0-114C1 115AF-115B5 115B8-115BE 115DC-115DD 11630-1163E 11640 "
        "116AB-116B5 1171D-1172A 1182C-11838 11930-11935 11937-11938 1193B-1193C 11940 11942 "
        "119D1-119D7 119DA-119DF 119E4 11A01-11A0A 11A35-11A39 11A3B-11A3E 11A51-11A5B "
        "11A8A-11A97 11B60-11B67 11BC0-11BE0 11C2F-11C36 11C38-11C3E 11C92-11CA7 11CA9-11CB6 "
        "11D31-11D36 11D3A 11D3C-11D3D 11D3F-11D41 11D43 11D47 11D8A-11D8E 11D90-11D91 "
        "11D93-11D96 11DB0-11DDB 11EF3-11EF6 11F00-11F10 11F12-11F3A 11F3E-11F40 12400-1246E "
        "1342F 13441-13446 13460-143FA 16100-1612E 16D40-16D6C 16EA0-16EB8 16EBB-16ED3 16F4F "
        "16F51-16F87 16F8F-16F92 16FF0-16FF6 187F8-187FF 18CFF 18D09-18D1E 18D80-18DF2 1B132 "
        "1B155 1BC9E 1DF25-1DF2A 1E000-1E006 1E008-1E018 1E01B-1E021 1E023-1E024 1E026-1E02A "
        "1E030-1E06D 1E08F 1E4D0-1E4EB 1E5D0-1E5ED 1E5F0 1E6C0-1E6DE 1E6E0-1E6F5 1E6FE-1E6FF "
        "1E947 1F130-1F149 1F150-1F169 1F170-1F189 2B739-2B73F 2CEA2-2CEAD 2EBF0-2EE5D "
        "31350-33479 "
    ),
    ("duckdb", "upper"): (
        "DF 1F80-1F87 1F90-1F97 1FA0-1FA7 1FB3 1FC3 1FF3 "
    ),
    ("duckdb", "lower"): (
        "130 "
    ),
}


def _parse(text: str) -> tuple[tuple[int, int], ...]:
    out = []
    for item in text.split():
        a, _, b = item.partition("-")
        out.append((int(a, 16), int(b or a, 16)))
    return tuple(out)


#: (engine, mapping) -> inclusive code point ranges the engine maps differently.
FIX: dict[tuple[str, str], tuple[tuple[int, int], ...]] = {k: _parse(v) for k, v in _FIX.items()}

ENGINES = ("polars", "duckdb")


def _merge(ranges: Iterable[tuple[int, int]]) -> tuple[tuple[int, int], ...]:
    out: list[list[int]] = []
    for a, b in sorted(ranges):
        if out and a <= out[-1][1] + 1:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return tuple((a, b) for a, b in out)


def ranges_of(code_points: Iterable[int]) -> tuple[tuple[int, int], ...]:
    """Inclusive ranges of a set of code points (the tests print `FIX` entries with it)."""
    return _merge((c, c) for c in code_points)


@lru_cache(maxsize=None)
def sql_fix(kind: str) -> tuple[tuple[int, int], ...]:
    """The SQL forms' set: every engine's (see the module docs)."""
    return _merge(r for engine in ENGINES for r in FIX[(engine, kind)])


def literal_class(ranges: Iterable[tuple[int, int]], negate: bool = False) -> str:
    """A regex class of non-ASCII code points written as themselves (shortest SQL; Rust
    ``regex`` and RE2 read UTF-8 literals in a class alike; none is a class metacharacter)."""
    body = []
    for a, b in ranges:
        assert a > 0x7F, "only non-ASCII code points are written literally"
        body.append(chr(a) if a == b else f"{chr(a)}-{chr(b)}" if b > a + 1
                    else chr(a) + chr(b))
    return f"[{'^' if negate else ''}{''.join(body)}]"
