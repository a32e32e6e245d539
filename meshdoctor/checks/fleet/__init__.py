"""checks/fleet"""
