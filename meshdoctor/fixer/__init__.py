"""fixer"""
