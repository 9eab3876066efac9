"""fincprg.finance"""
