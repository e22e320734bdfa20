"""Complex numbers as Excel writes them: texts such as ``"3+4i"``, ``"-2.5j"``, ``"i"``, ``"7"``.

Contract: a complex argument is Text (the excel profile also reads a Number as its text),
parsed strictly: an optional real part and an optional imaginary part ending in ``i`` or
``j`` (a bare ``i`` is 1), decimal or exponent notation, no spaces; anything else, empty text
included, is ``#NUM!``. Arguments mixing the ``i`` and ``j`` suffixes are ``#VALUE!``; a result
keeps the suffix of its arguments (``i`` by default). Arithmetic is Python's binary complex
(as Excel computes in doubles), so results are rounded to Excel's General format: each part to
15 significant digits, a zero part left out (``"0"`` for zero), ``i``/``-i`` for a unit
imaginary part. A non-finite result (overflow) is ``#NUM!``. Constant cost except IMSUM and
IMPRODUCT, linear in their arguments. No polars or SQL form: complex text has no column type.
"""

from __future__ import annotations

import cmath
import math
import re
from decimal import Decimal
from typing import Any, Callable

from ..types import NUMBER, TEXT, many
from ..values import DIV0, NUM, VALUE, XLError, general_text
from . import _numeric as nm
from ._numeric import Number
from .spec import Cost, FunctionSpec, Refuse, builtin, p, sig

_REFUSE = Refuse("complex numbers are texts parsed and formatted per value (Excel's "
                 "\"a+bi\" notation); neither polars nor SQL has a complex type to compute in")
_NUMBER = r"(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?"
_PATTERN = re.compile(
    rf"(?P<re>[+-]?{_NUMBER})?(?:(?P<sign>[+-])?(?P<im>{_NUMBER})?(?P<unit>[ij]))?")
_CAT = "engineering"


class _Parsed:
    __slots__ = ("value", "suffix")

    def __init__(self, value: complex, suffix: str | None) -> None:
        self.value, self.suffix = value, suffix


def _parse(text: str) -> _Parsed:
    m = _PATTERN.fullmatch(text)
    if not text or m is None or (m.group("re") is None and m.group("unit") is None):
        raise XLError(NUM, f"{text!r} is not a complex number")
    real = float(m.group("re")) if m.group("re") else 0.0
    imag = 0.0
    unit = m.group("unit")
    if unit:
        if m.group("re") is not None and m.group("sign") is None:
            # "3i" is fine (the number was read as the real part); "3+4i" has a sign
            imag, real = real, 0.0
        else:
            imag = float(m.group("im")) if m.group("im") else 1.0
            if m.group("sign") == "-":
                imag = -imag
    return _Parsed(complex(real, imag), unit)


def _suffix(*parsed: _Parsed) -> str:
    units = {p_.suffix for p_ in parsed if p_.suffix}
    if len(units) > 1:
        raise XLError(VALUE, "the arguments mix the suffixes i and j")
    return units.pop() if units else "i"


def _part(x: float) -> str:
    if not math.isfinite(x) or abs(x) >= 1e308:
        raise XLError(NUM, "the result is out of range")
    return general_text(Decimal(repr(x))) if x else "0"


def _format(z: complex, suffix: str) -> str:
    real, imag = _part(z.real), _part(z.imag)
    if imag == "0":
        return real
    unit = {"1": "", "-1": "-"}.get(imag, imag) + suffix
    if real == "0":
        return unit
    return real + ("" if unit.startswith("-") else "+") + unit


def _texts(args: tuple[Any, ...]) -> list[str]:
    out: list[str] = []
    for arg in args:
        if type(arg) is tuple:
            out.extend(v for v in arg if v is not None)
        elif arg is not None:
            out.append(arg)
    return out


_Z = p("inumber", TEXT, doc='a complex number as text, such as "3+4i"')


def _unary(name: str, f: Callable[[complex], complex], doc: str, examples: list[str],
           check: Callable[[complex], None] | None = None) -> FunctionSpec:
    def impl(inumber: str) -> str:
        z = _parse(inumber)
        if check is not None:
            check(z.value)
        try:
            return _format(f(z.value), _suffix(z))
        except (OverflowError, ZeroDivisionError, ValueError):
            raise XLError(NUM, f"{name} is out of range for this number") from None

    impl.__name__ = name.lower()
    impl.__module__ = __name__
    return builtin(name, sig(_Z, returns=TEXT), doc=doc, examples=examples,
                   cost=Cost.const(200), errors=("#NUM!",), category=_CAT,
                   polars=_REFUSE, sql=_REFUSE)(impl)


def _nonzero(z: complex) -> None:
    if z == 0:
        raise XLError(NUM, "the function is undefined at 0")


@builtin("COMPLEX", sig(p("real_num", NUMBER), p("i_num", NUMBER),
                        p("suffix", TEXT, "i", '"i" or "j"'), returns=TEXT),
         doc="A complex number as text from its real and imaginary parts.",
         examples=['COMPLEX(3, 4) -> "3+4i"', 'COMPLEX(3, 4, "j") -> "3+4j"', 'COMPLEX(0, 1) -> "i"',
                   'COMPLEX(1.5, -1) -> "1.5-i"', 'COMPLEX(0, 0) -> "0"', 'COMPLEX(1, 1, "k") -> #VALUE!'],
         cost=Cost.const(100), errors=("#VALUE!", "#NUM!"), category=_CAT,
         polars=_REFUSE, sql=_REFUSE)
def complex_(real_num: Number, i_num: Number, suffix: str = "i") -> str:
    if suffix not in ("i", "j", ""):
        raise XLError(VALUE, 'the suffix must be "i" or "j"')
    return _format(complex(float(real_num), float(i_num)), suffix or "i")


@builtin("IMREAL", sig(_Z, returns=NUMBER), doc="The real part of a complex number.",
         examples=['IMREAL("6-9i") -> 6', 'IMREAL("-2.5j") -> 0', 'IMREAL("x") -> #NUM!'],
         cost=Cost.const(100), errors=("#NUM!",), category=_CAT, polars=_REFUSE, sql=_REFUSE)
def imreal(inumber: str) -> Decimal:
    return nm.from_float(_parse(inumber).value.real)


@builtin("IMAGINARY", sig(_Z, returns=NUMBER), doc="The imaginary part of a complex number.",
         examples=['IMAGINARY("3+4i") -> 4', 'IMAGINARY("0-j") -> -1', 'IMAGINARY("4") -> 0',
                   'IMAGINARY("3+4k") -> #NUM!'],
         cost=Cost.const(100), errors=("#NUM!",), category=_CAT, polars=_REFUSE, sql=_REFUSE)
def imaginary(inumber: str) -> Decimal:
    return nm.from_float(_parse(inumber).value.imag)


@builtin("IMABS", sig(_Z, returns=NUMBER), doc="The modulus |z| of a complex number.",
         examples=['IMABS("5+12i") -> 13', 'IMABS("-3") -> 3', 'IMABS("") -> #NUM!'],
         cost=Cost.const(100), errors=("#NUM!",), category=_CAT, polars=_REFUSE, sql=_REFUSE)
def imabs(inumber: str) -> Decimal:
    return nm.from_float(abs(_parse(inumber).value))


@builtin("IMARGUMENT", sig(_Z, returns=NUMBER),
         doc="The argument (angle in radians, -pi to pi) of a complex number; #DIV/0! at 0.",
         examples=['ROUND(IMARGUMENT("3+4i"), 9) -> 0.927295218', 'ROUND(IMARGUMENT("-1"), 9) -> 3.141592654',
                   'IMARGUMENT("0") -> #DIV/0!'],
         cost=Cost.const(100), errors=("#NUM!", "#DIV/0!"), category=_CAT,
         polars=_REFUSE, sql=_REFUSE)
def imargument(inumber: str) -> Decimal:
    z = _parse(inumber).value
    if z == 0:
        raise XLError(DIV0, "the argument of 0 is undefined")
    return nm.from_float(cmath.phase(z))


@builtin("IMSUM", sig(p("inumber", many(TEXT)), returns=TEXT, repeat=1),
         doc="The sum of complex numbers (lists allowed).",
         examples=['IMSUM("3+4i", "5-3i") -> "8+i"', 'IMSUM(["1", "2j"], "j") -> "1+3j"',
                   'IMSUM("1+i", "1+j") -> #VALUE!'],
         cost=Cost.linear(100, 20), errors=("#NUM!", "#VALUE!"), category=_CAT,
         polars=_REFUSE, sql=_REFUSE)
def imsum(*args: Any) -> str:
    parsed = [_parse(t) for t in _texts(args)]
    return _format(sum((z.value for z in parsed), complex(0)), _suffix(*parsed))


@builtin("IMPRODUCT", sig(p("inumber", many(TEXT)), returns=TEXT, repeat=1),
         doc="The product of complex numbers (lists allowed).",
         examples=['IMPRODUCT("3+4i", "5-3i") -> "27+11i"', 'IMPRODUCT("1+2i", "30") -> "30+60i"',
                   'IMPRODUCT(["i", "i"]) -> "-1"'],
         cost=Cost.linear(100, 20), errors=("#NUM!", "#VALUE!"), category=_CAT,
         polars=_REFUSE, sql=_REFUSE)
def improduct(*args: Any) -> str:
    parsed = [_parse(t) for t in _texts(args)]
    result = complex(1)
    for z in parsed:
        result *= z.value
        if not (math.isfinite(result.real) and math.isfinite(result.imag)):
            raise XLError(NUM, "the product is out of range")
    return _format(result, _suffix(*parsed))


def _binary(name: str, f: Callable[[complex, complex], complex], doc: str,
            examples: list[str], errors: tuple[str, ...] = ("#NUM!", "#VALUE!")) -> FunctionSpec:
    def impl(inumber1: str, inumber2: str) -> str:
        a, b = _parse(inumber1), _parse(inumber2)
        suffix = _suffix(a, b)
        return _format(f(a.value, b.value), suffix)

    impl.__name__ = name.lower()
    impl.__module__ = __name__
    return builtin(name, sig(p("inumber1", TEXT), p("inumber2", TEXT), returns=TEXT), doc=doc,
                   examples=examples, cost=Cost.const(200), errors=errors, category=_CAT,
                   polars=_REFUSE, sql=_REFUSE)(impl)


def _divide(a: complex, b: complex) -> complex:
    if b == 0:
        raise XLError(NUM, "division by the complex number 0")
    return a / b


IMSUB = _binary("IMSUB", lambda a, b: a - b, "The difference of two complex numbers.",
                ['IMSUB("13+4i", "5+3i") -> "8+i"', 'IMSUB("1", "1") -> "0"',
                 'IMSUB("1+i", "1+j") -> #VALUE!'])
IMDIV = _binary("IMDIV", _divide, "The quotient of two complex numbers; #NUM! for a divisor 0.",
                ['IMDIV("-238+240i", "10+24i") -> "5+12i"', 'IMDIV("1", "i") -> "-i"',
                 'IMDIV("1", "0") -> #NUM!'])


@builtin("IMPOWER", sig(_Z, p("number", NUMBER), returns=TEXT),
         doc="A complex number raised to a real power (principal value).",
         examples=['IMPOWER("2+3i", 3) -> "-46+9.00000000000001i"', 'IMPOWER("i", 2) -> "-1+1.22464679914735E-16i"',
                   'IMPOWER("4", 0.5) -> "2"', 'IMPOWER("0", -1) -> #NUM!'],
         cost=Cost.const(200), errors=("#NUM!",), category=_CAT, polars=_REFUSE, sql=_REFUSE)
def impower(inumber: str, number: Number) -> str:
    z = _parse(inumber)
    n = float(number)
    if z.value == 0:
        if n <= 0:
            raise XLError(NUM, "0 to a power <= 0 is undefined")
        return _format(complex(0), _suffix(z))
    r, theta = cmath.polar(z.value)  # Excel's polar form: r^n (cos n theta + i sin n theta)
    try:
        result = cmath.rect(r ** n, theta * n)
    except (OverflowError, ValueError):
        raise XLError(NUM, "the power is out of range") from None
    return _format(result, _suffix(z))


def _log(base: float) -> Callable[[complex], complex]:
    return lambda z: cmath.log(z) / math.log(base)


IMCONJUGATE = _unary("IMCONJUGATE", lambda z: z.conjugate(),
                     "The complex conjugate of a complex number.",
                     ['IMCONJUGATE("3+4i") -> "3-4i"', 'IMCONJUGATE("-j") -> "j"',
                      'IMCONJUGATE("3+") -> #NUM!'])
IMSQRT = _unary("IMSQRT", cmath.sqrt, "The principal square root of a complex number.",
                ['IMSQRT("1+i") -> "1.09868411346781+0.455089860562227i"', 'IMSQRT("-4") -> "2i"',
                 'IMSQRT("0") -> "0"'])
IMEXP = _unary("IMEXP", cmath.exp, "The exponential e^z of a complex number.",
               ['IMEXP("1+i") -> "1.46869393991589+2.28735528717884i"', 'IMEXP("0") -> "1"',
                'IMEXP("1000") -> #NUM!'])
IMLN = _unary("IMLN", cmath.log, "The natural logarithm (principal value) of a complex number.",
              ['IMLN("3+4i") -> "1.6094379124341+0.927295218001612i"', 'IMLN("1") -> "0"',
               'IMLN("0") -> #NUM!'], check=_nonzero)
IMLOG10 = _unary("IMLOG10", _log(10), "The base-10 logarithm of a complex number.",
                 ['IMLOG10("3+4i") -> "0.698970004336019+0.402719196273373i"',
                  'IMLOG10("100") -> "2"', 'IMLOG10("0") -> #NUM!'], check=_nonzero)
IMLOG2 = _unary("IMLOG2", _log(2), "The base-2 logarithm of a complex number.",
                ['IMLOG2("3+4i") -> "2.32192809488736+1.33780421245098i"', 'IMLOG2("8") -> "3"',
                 'IMLOG2("0") -> #NUM!'], check=_nonzero)
IMSIN = _unary("IMSIN", cmath.sin, "The sine of a complex number.",
               ['IMSIN("4+3i") -> "-7.61923172032141-6.548120040911i"', 'IMSIN("0") -> "0"',
                'IMSIN("1000i") -> #NUM!'])
IMCOS = _unary("IMCOS", cmath.cos, "The cosine of a complex number.",
               ['IMCOS("1+i") -> "0.833730025131149-0.988897705762865i"', 'IMCOS("0") -> "1"',
                'IMCOS("1000i") -> #NUM!'])
IMTAN = _unary("IMTAN", cmath.tan, "The tangent of a complex number.",
               ['IMTAN("4+3i") -> "0.00490825806749606+1.00070953606723i"', 'IMTAN("0") -> "0"',
                'IMTAN("x") -> #NUM!'])
IMSINH = _unary("IMSINH", cmath.sinh, "The hyperbolic sine of a complex number.",
                ['IMSINH("4+3i") -> "-27.0168132580039+3.85373803791938i"', 'IMSINH("0") -> "0"',
                 'IMSINH("1000") -> #NUM!'])
IMCOSH = _unary("IMCOSH", cmath.cosh, "The hyperbolic cosine of a complex number.",
                ['IMCOSH("4+3i") -> "-27.0349456030742+3.85115333481178i"', 'IMCOSH("0") -> "1"',
                 'IMCOSH("1000") -> #NUM!'])
IMSEC = _unary("IMSEC", lambda z: 1 / cmath.cos(z), "The secant of a complex number.",
               ['ROUND(IMREAL(IMSEC("4+3i")), 12) -> -0.065294027858', 'IMSEC("0") -> "1"',
                'IMSEC("") -> #NUM!'])
IMCSC = _unary("IMCSC", lambda z: 1 / cmath.sin(z), "The cosecant of a complex number.",
               ['IMCSC("4+3i") -> "-0.0754898329158637+0.0648774713706355i"',
                'IMCSC("0") -> #NUM!', 'IMCSC("1+j") -> "0.621518017170428-0.303931001628426j"'],
               check=_nonzero)
IMCOT = _unary("IMCOT", lambda z: cmath.cos(z) / cmath.sin(z), "The cotangent of a complex number.",
               ['ROUND(IMREAL(IMCOT("4+3i")), 12) -> 0.004901182394', 'IMCOT("0") -> #NUM!',
                'IMCOT("1") -> "0.642092615934331"'], check=_nonzero)
IMSECH = _unary("IMSECH", lambda z: 1 / cmath.cosh(z), "The hyperbolic secant of a complex number.",
                ['IMSECH("4+3i") -> "-0.0362534969158689-0.00516434460775318i"',
                 'IMSECH("0") -> "1"', 'IMSECH("q") -> #NUM!'])
IMCSCH = _unary("IMCSCH", lambda z: 1 / cmath.sinh(z),
                "The hyperbolic cosecant of a complex number.",
                ['ROUND(IMAGINARY(IMCSCH("4+3i")), 12) -> -0.005174473184',
                 'IMCSCH("0") -> #NUM!', 'IMCSCH("1") -> "0.850918128239322"'], check=_nonzero)
