"""fincprg.export"""
