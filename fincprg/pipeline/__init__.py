"""Stage contract, signatures and the checkpointing runner."""
