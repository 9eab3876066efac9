"""fincprg.train"""
