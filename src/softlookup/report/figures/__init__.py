"""report/figures"""
