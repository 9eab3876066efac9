"""fincprg.generate"""
