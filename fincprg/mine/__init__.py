"""fincprg.mine"""
