"""Tests of the typed-tool lane (a package so test module names cannot clash with other lanes)."""
