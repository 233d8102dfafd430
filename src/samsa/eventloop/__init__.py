"""Helpers for work on one asyncio event loop: cancelling tasks, slicing long passes, clocks that stand still while the loop is held."""
