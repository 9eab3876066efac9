"""fincprg.llm"""
