"""fincprg.chunking"""
