"""Adapters that let an existing scheduler call schedopt through its own interface."""
