"""Moved to :mod:`fincprg.io` (the ground floor); this name is kept for code written against it.

New code imports ``fincprg.io``: a stage that imported ``fincprg.pipeline`` would sit below the engine that
runs it (tests/unit/test_floors.py checks that no package does).
"""
from fincprg.io import (  # noqa: F401 - re-exported
    JsonlAppender, atomic_write_json, atomic_write_jsonl, atomic_write_text, atomic_writer, batch_lines,
    count_lines, discard_staging, hash_files, read_jsonl, record_line, staging_dir, swap_in, update_hash,
)
