"""Shared test configuration: Hypothesis profiles.

Every run draws the same examples (``derandomize``), so CI on a clean checkout is repeatable
and a red run is a real regression, not an unlucky draw. ``FORMULANE_EXPLORE=1`` draws new
examples (more of them) for hunting bugs locally; what it finds becomes a fixed case.
"""

import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "fixed", max_examples=100, deadline=None, derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "explore", max_examples=1000, deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile("explore" if os.environ.get("FORMULANE_EXPLORE") == "1" else "fixed")
