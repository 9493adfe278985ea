"""Locust players (``locustfile.py``) and the reading of their statistics (``compare.py``)."""
