"""Audit of mined labels (paper §6.1): sampling by score interval, judges, FP/FN estimates, review page."""
