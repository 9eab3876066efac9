"""fincprg.report"""
