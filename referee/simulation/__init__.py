"""Simulated games: players that play legally at random, rule breaks injected on purpose, and
the tables and sensor events such games produce. Used by the tests, the benchmarks, the
recording and the web demo. Imports only the engine and the sensor contract.
"""
