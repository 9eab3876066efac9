"""fincprg.topics"""
