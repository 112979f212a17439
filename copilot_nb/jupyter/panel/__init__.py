"""jupyter/panel"""
