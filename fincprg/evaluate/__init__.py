"""fincprg.evaluate"""
