"""The unit table of CONVERT (private): Excel's unit names, grouped by quantity, each with its
size in the quantity's SI unit, and the metric and binary prefixes.

Contract: `factor(name)` gives ``(quantity, Decimal size)`` for a unit name as Excel spells it
(case-sensitive), with a metric prefix on units Excel allows one on (squared and cubed units
take the prefix's square or cube; bits and bytes also take binary prefixes ki..Yi), or None.
Temperatures are affine and handled by `to_kelvin` / `from_kelvin`. Sizes are the values
Microsoft documents (exact where the definition is exact, e.g. the inch, pound and gallon).
"""

from __future__ import annotations

from decimal import Decimal

_D = Decimal

#: quantity -> {unit: (size in the SI unit, takes a prefix)}
UNITS: dict[str, dict[str, tuple[Decimal, bool]]] = {
    "mass": {
        "g": (_D(1), True), "sg": (_D("14593.9029372064"), False),
        "lbm": (_D("453.59237"), False), "u": (_D("1.66053886E-24"), True),
        "ozm": (_D("28.349523125"), False), "grain": (_D("0.06479891"), False),
        "cwt": (_D("45359.237"), False), "shweight": (_D("45359.237"), False),
        "uk_cwt": (_D("50802.34544"), False), "lcwt": (_D("50802.34544"), False),
        "hweight": (_D("50802.34544"), False), "stone": (_D("6350.29318"), False),
        "ton": (_D("907184.74"), False), "uk_ton": (_D("1016046.9088"), False),
        "LTON": (_D("1016046.9088"), False), "brton": (_D("1016046.9088"), False),
    },
    "distance": {
        "m": (_D(1), True), "mi": (_D("1609.344"), False), "Nmi": (_D(1852), False),
        "in": (_D("0.0254"), False), "ft": (_D("0.3048"), False), "yd": (_D("0.9144"), False),
        "ang": (_D("1E-10"), True), "ell": (_D("1.143"), False),
        "ly": (_D("9460730472580800"), True), "parsec": (_D("30856775812815500"), True),
        "pc": (_D("30856775812815500"), True), "Picapt": (_D("0.0254") / 72, False),
        "Pica": (_D("0.0254") / 72, False), "pica": (_D("0.0254") / 6, False),
        "survey_mi": (_D(6336000) / 3937, False),
    },
    "time": {
        "yr": (_D(31557600), False), "day": (_D(86400), False), "d": (_D(86400), False),
        "hr": (_D(3600), False), "mn": (_D(60), False), "min": (_D(60), False),
        "sec": (_D(1), True), "s": (_D(1), True),
    },
    "pressure": {
        "Pa": (_D(1), True), "p": (_D(1), True), "atm": (_D(101325), True),
        "at": (_D(101325), True), "mmHg": (_D("133.322"), True),
        "psi": (_D("6894.75729316836"), True), "Torr": (_D(101325) / 760, True),
    },
    "force": {
        "N": (_D(1), True), "dyn": (_D("1E-5"), True), "dy": (_D("1E-5"), True),
        "lbf": (_D("4.4482216152605"), True), "pond": (_D("0.00980665"), True),
    },
    "energy": {
        "J": (_D(1), True), "e": (_D("1E-7"), True), "c": (_D("4.184"), True),
        "cal": (_D("4.1868"), True), "eV": (_D("1.602176487E-19"), True),
        "ev": (_D("1.602176487E-19"), True), "HPh": (_D("2684519.53769617"), False),
        "hh": (_D("2684519.53769617"), False), "Wh": (_D(3600), True), "wh": (_D(3600), True),
        "flb": (_D("1.3558179483314"), False), "BTU": (_D("1055.05585262"), False),
        "btu": (_D("1055.05585262"), False),
    },
    "power": {
        "HP": (_D("745.69987158227"), False), "h": (_D("745.69987158227"), False),
        "PS": (_D("735.49875"), False), "W": (_D(1), True), "w": (_D(1), True),
    },
    "magnetism": {"T": (_D(1), True), "ga": (_D("1E-4"), True)},
    "volume": {
        "tsp": (_D("4.92892159375E-6"), False), "tspm": (_D("5E-6"), False),
        "tbs": (_D("1.478676478125E-5"), False), "oz": (_D("2.95735295625E-5"), False),
        "cup": (_D("0.0002365882365"), False), "pt": (_D("0.000473176473"), False),
        "us_pt": (_D("0.000473176473"), False), "uk_pt": (_D("0.00056826125"), False),
        "qt": (_D("0.000946352946"), False), "uk_qt": (_D("0.0011365225"), False),
        "gal": (_D("0.003785411784"), False), "uk_gal": (_D("0.00454609"), False),
        "l": (_D("0.001"), True), "L": (_D("0.001"), True), "lt": (_D("0.001"), True),
        "barrel": (_D("0.158987294928"), False), "bushel": (_D("0.03523907016688"), False),
        "GRT": (_D("2.8316846592"), False), "regton": (_D("2.8316846592"), False),
        "MTON": (_D("1.13267386368"), False),
    },
    "area": {
        "uk_acre": (_D("4046.8564224"), False), "us_acre": (_D("4046.87260987425"), False),
        "ar": (_D(100), True), "ha": (_D(10000), False), "Morgen": (_D(2500), False),
    },
    "information": {"bit": (_D(1), True), "byte": (_D(8), True)},
    "speed": {
        "admkn": (_D("0.514773333333333"), False), "kn": (_D(1852) / 3600, False),
        "m/h": (_D(1) / 3600, True), "m/hr": (_D(1) / 3600, True), "m/s": (_D(1), True),
        "m/sec": (_D(1), True), "mph": (_D("0.44704"), False),
    },
}

#: Lengths that also name areas and volumes ("ft2", "ft^2", "m3"...): (size, takes a prefix).
_POWERED = {"m": True, "mi": False, "Nmi": False, "in": False, "ft": False, "yd": False,
            "ang": True, "ly": True, "Picapt": False, "Pica": False}


def _add_powers() -> None:
    """Square and cubic units of the distances above (area and volume tables)."""
    for name, prefixable in _POWERED.items():
        size = UNITS["distance"][name][0]
        for power, quantity in ((2, "area"), (3, "volume")):
            for spelling in (f"{name}{power}", f"{name}^{power}"):
                UNITS[quantity][spelling] = (size ** power, prefixable)


_add_powers()

METRIC = {"Y": 24, "Z": 21, "E": 18, "P": 15, "T": 12, "G": 9, "M": 6, "k": 3, "h": 2,
          "da": 1, "e": 1, "d": -1, "c": -2, "m": -3, "u": -6, "n": -9, "p": -12, "f": -15,
          "a": -18, "z": -21, "y": -24}
BINARY = {"ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60, "Zi": 70, "Yi": 80}
TEMPERATURES = ("C", "cel", "F", "fah", "K", "kel", "Rank", "Reau")


def _power_of(unit: str) -> int:
    return 3 if unit.endswith("3") else 2 if unit.endswith("2") else 1


def factor(name: str) -> tuple[str, Decimal] | None:
    """(quantity, size in the SI unit) of a unit name, prefixes included; None if unknown."""
    for quantity, table in UNITS.items():
        if name in table:
            return quantity, table[name][0]
    for prefix, exponent in (*METRIC.items(), *BINARY.items()):
        if not name.startswith(prefix):
            continue
        base = name[len(prefix):]
        for quantity, table in UNITS.items():
            entry = table.get(base)
            if entry is None or not entry[1]:
                continue
            if prefix in BINARY:
                if quantity != "information":
                    continue
                return quantity, entry[0] * (2 ** exponent)
            return quantity, entry[0] * Decimal(10) ** (exponent * _power_of(base))
    return None


def kelvin_scale(name: str) -> Decimal | None:
    """The prefix factor of a (prefixed) kelvin name such as "mK", or None."""
    if name in ("K", "kel"):
        return Decimal(1)
    for prefix, exponent in METRIC.items():
        if name.startswith(prefix) and name[len(prefix):] in ("K", "kel"):
            return Decimal(10) ** exponent
    return None


def is_temperature(name: str) -> bool:
    return name in TEMPERATURES or kelvin_scale(name) is not None


def to_kelvin(x: Decimal, name: str) -> Decimal:
    if name in ("C", "cel"):
        return x + Decimal("273.15")
    if name in ("F", "fah"):
        return (x - 32) * 5 / 9 + Decimal("273.15")
    if name == "Rank":
        return x * 5 / 9
    if name == "Reau":
        return x * 5 / 4 + Decimal("273.15")
    return x * kelvin_scale(name)  # type: ignore[operator]


def from_kelvin(k: Decimal, name: str) -> Decimal:
    if name in ("C", "cel"):
        return k - Decimal("273.15")
    if name in ("F", "fah"):
        return (k - Decimal("273.15")) * 9 / 5 + 32
    if name == "Rank":
        return k * 9 / 5
    if name == "Reau":
        return (k - Decimal("273.15")) * 4 / 5
    return k / kelvin_scale(name)  # type: ignore[operator]
