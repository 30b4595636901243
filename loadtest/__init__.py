"""Load tests for the HGEMM service: Locust scenarios with a target-rate ramp (`locust -f loadtest/`), the saturation
report (`python -m loadtest.report`) and a naive baseline server (`python -m loadtest.naive_server`).

Locust imports every `*.py` here whose name does not start with `_`: helpers are `_*.py`, and report.py and
naive_server.py import nothing heavy at module level."""
