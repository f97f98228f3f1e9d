"""What searches saved and how the engine is used: the metrics log, savings, usage and the dashboard.
"""
