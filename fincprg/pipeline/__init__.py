"""The engines: the checkpointing runner, the stage context and its batch loop (local or on Ray). The stage contract
they implement, the table of stages and their signatures, is :mod:`fincprg.contract`."""
