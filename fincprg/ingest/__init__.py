"""fincprg.ingest"""
